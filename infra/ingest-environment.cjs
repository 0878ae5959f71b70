// serverless.yml's bridge for the ingest's settings: `${file(infra/ingest-environment.cjs):environment}` is
// the ingest's whole environment, `${file(infra/ingest-environment.cjs):ingestSettings}` the IngestSettings
// output. The queue URLs come from QUEUE_ENV_VARS (lib/queue/port.ts) through queueEnvironment()
// (infra/definitions.ts), so a new queue needs no edit of serverless.yml; the other settings stay written in
// serverless.yml's custom.ingestEnvironment: `published` (what decides a delivery, also the output) and
// `private`. Loaded as infra/subscriptions.cjs is: osls (v3) and the Framework v4 both call the function with
// { options, resolveVariable } (resolving the variables inside the block), and tsx loads the TypeScript.
'use strict';

const { require: tsxRequire } = require('tsx/cjs/api');

const SETTINGS = 'custom.ingestEnvironment';
const GROUPS = ['published', 'private'];

module.exports = async ({ resolveVariable }) => {
  const { QUEUE_ENV_VARS, queueEnvironment } = tsxRequire('./definitions.ts', __filename);
  const settings = await resolveVariable(`self:${SETTINGS}`);
  const environment = queueEnvironment();
  // Where each variable comes from, to name both sides of a collision.
  const source = {};
  for (const [key, name] of Object.entries(QUEUE_ENV_VARS))
    source[name] = `the ${key} queue's ${name} (QUEUE_ENV_VARS, lib/queue/port.ts)`;
  for (const group of GROUPS) {
    const variables = settings?.[group];
    if (typeof variables !== 'object' || variables === null || Array.isArray(variables))
      throw new Error(`serverless.yml: ${SETTINGS}.${group} must be a map of variable names to values`);
    for (const [name, value] of Object.entries(variables)) {
      const here = `${SETTINGS}.${group}.${name}`;
      if (Object.hasOwn(source, name))
        throw new Error(`serverless.yml: ${here} collides with ${source[name]}`);
      source[name] = here;
      environment[name] = value;
    }
  }
  // One JSON object of strings, as `npm run ops -- replay-parked` reads it.
  const published = Object.entries(settings.published).map(([name, value]) => [name, String(value)]);
  return { environment, ingestSettings: JSON.stringify(Object.fromEntries(published)) };
};
