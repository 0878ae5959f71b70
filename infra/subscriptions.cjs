// serverless.yml's bridge to infra/subscriptions.ts: `${file(infra/subscriptions.cjs):resources}` and
// `${file(infra/subscriptions.cjs):publishEvents}`. osls (v3) and Serverless Framework v4 both call a
// function exported by a .js/.cjs file with { options, resolveVariable } and then follow the address.
// CommonJS because osls loads the file with require(); tsx (a dev dependency, like osls) loads the
// TypeScript. Subscriptions come from subscriptions.yml, or the file SUBSCRIPTIONS_FILE names.
'use strict';

const { join } = require('node:path');
const { require: tsxRequire } = require('tsx/cjs/api');

module.exports = async ({ resolveVariable }) => {
  const { loadSubscriptions } = tsxRequire('../lib/bus/subscriptions.ts', __filename);
  const { publishEvents, subscriptionResources } = tsxRequire('./subscriptions.ts', __filename);
  const subscriptions = loadSubscriptions({ root: join(__dirname, '..'), mode: 'aws' });
  const names = { service: await resolveVariable('self:service'), stage: await resolveVariable('sls:stage') };
  return {
    resources: subscriptionResources(subscriptions, names),
    publishEvents: publishEvents(subscriptions, await resolveVariable('param:publishEvents')),
  };
};
