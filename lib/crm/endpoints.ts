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

/**
 * Whether a tenant state's `Api` may be called with the tenant's credentials: https (http only on the
 * same loopback host as CRM_API_URL), and a host of CRM_API_URL's domain (`sod3.superoffice.com` for
 * `online.superoffice.com`; the very host when CRM_API_URL's is an address or a single label). The
 * state is the CRM's answer: a host outside its domain (another site, a link-local metadata address)
 * would be sent the tenant's ticket and app token.
 *
 * @example isCrmApiHost('https://online.superoffice.com/{ContextIdentifier}/api/v1', 'https://sod3.superoffice.com/Cust1/api') === true
 */
export function isCrmApiHost(apiUrl: string, api: string): boolean {
  let base: URL;
  let candidate: URL;
  try {
    base = new URL(apiUrl.replace('{ContextIdentifier}', 'x'));
    candidate = new URL(api);
  } catch {
    return false;
  }
  if (candidate.username !== '' || candidate.password !== '') return false;
  if (candidate.protocol !== 'https:' && !(candidate.protocol === 'http:' && base.protocol === 'http:'))
    return false;
  const host = base.hostname;
  const labels = host.split('.');
  const isAddress = /^[\d.]+$/.test(host) || host.startsWith('[');
  if (isAddress || labels.length < 3) return candidate.hostname === host;
  return candidate.hostname === host || candidate.hostname.endsWith(`.${labels.slice(1).join('.')}`);
}
