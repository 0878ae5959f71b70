// serverless.yml's CRM_CREDENTIALS_PARAMETER for the reconcile function: `${file(infra/crm-environment.cjs):credentialsParameter}`
// is custom.crmCredentialsParameter when the stage param crmApiUrl is set, else "": lib/config/crm.ts refuses
// credentials without CRM_API_URL (reconciliation off), so the name goes only where reconciliation is on. Loaded
// as infra/subscriptions.cjs is: osls (v3) and the Framework v4 both call the function with { resolveVariable }.
'use strict';

module.exports = async ({ resolveVariable }) => {
  const apiUrl = String((await resolveVariable('param:crmApiUrl')) ?? '').trim();
  if (apiUrl === '') return { credentialsParameter: '' };
  return { credentialsParameter: String(await resolveVariable('self:custom.crmCredentialsParameter')) };
};
