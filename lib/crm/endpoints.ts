/**
 * Where each tenant's API is, as its state last said: the CRM client's `apiBaseOf` and `follow`. A
 * tenant that moved (its state's `Api` changed, or its old host answered 421) is followed to the new
 * base; a tenant never followed is called at CRM_API_URL's.
 */
export function tenantEndpoints() {
  const bases = new Map<string, string>();
  return {
    apiBaseOf: (context: string) => bases.get(context),
    follow: (context: string, api: string) => {
      bases.set(context, `${api.replace(/\/+$/, '')}/v1`);
    },
  };
}
