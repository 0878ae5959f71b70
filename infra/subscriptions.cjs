// serverless.yml's bridge to infra/subscriptions.ts: `${file(infra/subscriptions.cjs):resources}` and
// `${file(infra/subscriptions.cjs):publishEvents}`. osls (v3) and Serverless Framework v4 both call a
// function exported by a .js/.cjs file with { options, resolveVariable } and then follow the address.
// CommonJS because osls loads the file with require(); tsx (a dev dependency, like osls) loads the
// TypeScript. Subscriptions come from subscriptions.yml, or the file SUBSCRIPTIONS_FILE names. A mistake in
// that file is one line and exit 1 (osls would print the stack once per variable that uses this file).
'use strict';

const { join } = require('node:path');
const { require: tsxRequire } = require('tsx/cjs/api');

// osls resolves several variables from this file: the warnings are printed once.
let warned = false;

module.exports = async ({ resolveVariable }) => {
  const { loadSubscriptions } = tsxRequire('../lib/bus/subscriptions.ts', __filename);
  const { SubscriptionsError } = tsxRequire('../lib/bus/errors.ts', __filename);
  const { neverMatching } = tsxRequire('../lib/bus/never-matching.ts', __filename);
  const { publishEvents, subscriptionResources } = tsxRequire('./subscriptions.ts', __filename);
  const { publishDetailTypes } = tsxRequire('../lib/bus/publish-filter.ts', __filename);
  let subscriptions;
  try {
    subscriptions = loadSubscriptions({ root: join(__dirname, '..'), mode: 'aws' });
  } catch (error) {
    if (!(error instanceof SubscriptionsError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
  if (!warned) for (const warning of neverMatching(subscriptions)) console.warn(`warning: ${warning}`);
  warned = true;
  const names = { service: await resolveVariable('self:service'), stage: await resolveVariable('sls:stage') };
  const param = await resolveVariable('param:publishEvents');
  return {
    resources: subscriptionResources(subscriptions, names),
    publishEvents: publishEvents(subscriptions, param),
    publishDetailTypes: publishDetailTypes(
      subscriptions.map((subscription) => subscription.pattern),
      param,
    ),
  };
};
