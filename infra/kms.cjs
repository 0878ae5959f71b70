// serverless.yml's bridge to infra/kms.ts: `${file(infra/kms.cjs):resources}`, the kmsKeyArn param's encryption
// of the queues, tables and buses of infra/resources.yml and infra/subscriptions.cjs, and the roles' use of the
// key (infra/iam.yml). Loaded as infra/subscriptions.cjs is; without the param it adds nothing.
'use strict';

const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { load } = require('js-yaml');
const { require: tsxRequire } = require('tsx/cjs/api');
const subscriptions = require('./subscriptions.cjs');

module.exports = async (context) => {
  const { kmsResources } = tsxRequire('./kms.ts', __filename);
  const keyArn = String((await context.resolveVariable('param:kmsKeyArn')) ?? '');
  if (keyArn === '') return { resources: kmsResources([], keyArn) };
  const file = (name) => load(readFileSync(join(__dirname, name), 'utf8'));
  const { resources } = await subscriptions(context);
  return { resources: kmsResources([file('resources.yml'), file('iam.yml'), resources], keyArn) };
};
