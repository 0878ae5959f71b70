// serverless.yml's STATE_EVENT_TOKEN for the ingest: `${file(infra/state-event-token.cjs):value}` is the stage
// param stateEventToken, checked. A production stage (param production "true") without a token fails to package
// with one line naming the parameter, unless allowUnauthenticatedStateEvents is "true": without it, anyone who
// can reach the endpoint can set a webhook's recorded state (SECURITY.md). Loaded as infra/subscriptions.cjs is:
// osls (v3) and the Framework v4 both call the function with { options, resolveVariable }.
'use strict';

module.exports = async ({ resolveVariable }) => {
  const flag = async (name) => {
    const value = String(await resolveVariable(`param:${name}`));
    if (value !== 'true' && value !== 'false')
      throw new Error(`serverless.yml: the stage param ${name} must be "true" or "false", not "${value}"`);
    return value === 'true';
  };
  const token = String((await resolveVariable('param:stateEventToken')) ?? '').trim();
  const production = await flag('production');
  const allowed = await flag('allowUnauthenticatedStateEvents');
  if (production && token === '' && !allowed) {
    const stage = await resolveVariable('sls:stage');
    const service = await resolveVariable('self:service');
    throw new Error(
      `stage ${stage} is a production stage (param production "true") and its stage param stateEventToken is ` +
        `empty: put a token in SSM at /${service}/${stage}/state-event-token, which params.prod reads (docs/deploy.md, ` +
        '"Deploy"), or set allowUnauthenticatedStateEvents "true" to accept unauthenticated webhook state events (SECURITY.md)',
    );
  }
  return { value: token };
};
