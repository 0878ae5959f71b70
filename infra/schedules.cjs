// serverless.yml's bridge to infra/schedules.ts: `${file(infra/schedules.cjs):reconcilePoll}`, the rate of a
// schedule the code is written for. Loaded as infra/subscriptions.cjs is: osls (v3) and the Framework v4 both
// call the function, and tsx loads the TypeScript.
'use strict';

const { require: tsxRequire } = require('tsx/cjs/api');

module.exports = async () => tsxRequire('./schedules.ts', __filename).SCHEDULE_RATES;
