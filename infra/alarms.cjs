// serverless.yml's bridge to infra/alarms.ts: `${file(infra/alarms.cjs):resources}`, the alarms that come one
// per function, per table or per setting. Loaded as infra/subscriptions.cjs is: osls (v3) and the Framework v4
// both call the function with { options, resolveVariable }, and tsx loads the TypeScript.
'use strict';

const { require: tsxRequire } = require('tsx/cjs/api');

module.exports = async ({ resolveVariable }) => {
  const { alarmResources } = tsxRequire('./alarms.ts', __filename);
  const setting = async (name) => String((await resolveVariable(`param:${name}`)) ?? '');
  return {
    resources: alarmResources({
      service: await resolveVariable('self:service'),
      // What POWERTOOLS_SERVICE_NAME is set to, as infra/alarms.yml's metric alarms read it.
      metricsService: await resolveVariable('self:custom.powertoolsServiceName'),
      stage: await resolveVariable('sls:stage'),
      signatureFailureThreshold: await setting('signatureFailureThreshold'),
      heartbeatHours: await setting('heartbeatHours'),
      eventIdIndex: await setting('eventIdIndex'),
    }),
  };
};
