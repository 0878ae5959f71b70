import {
  createPrivateKey,
  createPublicKey,
  createSign,
  createVerify,
  generateKeyPairSync,
  randomBytes,
} from 'node:crypto';
import { CrmError } from './errors.js';
import type { CrmAnswer } from './http.js';

/** How clients of the simulated CRM authenticate (crm-rest-api.md, "Addresses and authentication"). */
export interface AuthOptions {
  /** On-premises style `Authorization: Basic` credentials. */
  user: string;
  password: string;
  /** The partner app's client secret: `ApplicationToken` when authenticating, `SO-AppToken` on calls. */
  applicationToken: string;
  /** The per-tenant system user token the app holds after consent. */
  systemUserToken: string;
  /** The app's RSA public key (PEM) that verifies `SignedSystemToken`. */
  appPublicKey: string;
  /** How long a ticket lives after its last use (sliding); the CRM's is about 6 hours. */
  ticketLifetimeMs: number;
}

const generated = new Map<string, { privateKey: string; publicKey: string }>();

/**
 * An RSA key pair for a simulated partner app (PEM), for tests and `npm run crm`: made once per
 * process per purpose (a 2048-bit key costs a few hundred milliseconds); `issuer` is the simulated
 * identity provider's own, which signs the JWTs.
 */
export function generateAppKeys(purpose: 'app' | 'issuer' = 'app'): {
  privateKey: string;
  publicKey: string;
} {
  const known = generated.get(purpose);
  if (known) return known;
  const keys = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  generated.set(purpose, keys);
  return keys;
}

/** `<token>.<yyyyMMddHHmm UTC>.<base64 RSA-SHA256 signature of the first two>`, as an app signs it. */
export function signSystemToken(token: string, privateKeyPem: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-T:]/g, '').slice(0, 12);
  const data = `${token}.${stamp}`;
  return `${data}.${createSign('RSA-SHA256').update(data).sign(createPrivateKey(privateKeyPem), 'base64')}`;
}

const TICKET_CLAIM = 'http://schemes.superoffice.net/identity/ticket';
const SIGNED_TOKEN_MAX_AGE_MS = 10 * 60_000;

/** Tickets and the checks of every API call. */
export function createAuth(options: AuthOptions) {
  const tickets = new Map<string, { context: string; expiresAt: number }>();
  // The simulated identity provider's own key, which signs the JWTs it answers with.
  const issuer = generateAppKeys('issuer');
  const jwt = (claims: Record<string, unknown>) => {
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const data = `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}`;
    return `${data}.${createSign('RSA-SHA256').update(data).sign(issuer.privateKey, 'base64url')}`;
  };

  return {
    /** The public key that verifies the JWTs `authenticate` answers with. */
    issuerPublicKey: issuer.publicKey,
    /**
     * `POST /Login/api/PartnerSystemUser/Authenticate`: checks the signed system user token (the
     * app's signature, a timestamp within 10 minutes, the tenant's token) and the application token;
     * answers `{IsSuccessful, ErrorMessage, Token}` with a JWT carrying a new ticket.
     */
    authenticate(body: Record<string, unknown>, webApiUrl: (context: string) => string, now = Date.now()) {
      const fail = (message: string): CrmAnswer => ({
        status: 200,
        body: { IsSuccessful: false, ErrorMessage: message, Token: null },
      });
      const { SignedSystemToken: signed, ApplicationToken: appToken, ContextIdentifier: context } = body;
      if (typeof signed !== 'string' || typeof appToken !== 'string' || typeof context !== 'string')
        throw new CrmError('SignedSystemToken, ApplicationToken and ContextIdentifier are required strings');
      if (appToken !== options.applicationToken) return fail('unknown ApplicationToken');
      const cut = signed.lastIndexOf('.');
      const data = signed.slice(0, cut);
      const [token, stamp] = [data.slice(0, data.lastIndexOf('.')), data.slice(data.lastIndexOf('.') + 1)];
      const verified =
        cut > 0 &&
        createVerify('RSA-SHA256')
          .update(data)
          .verify(createPublicKey(options.appPublicKey), signed.slice(cut + 1), 'base64');
      if (!verified) return fail('the SignedSystemToken signature does not verify with the application key');
      const at = Date.UTC(
        +stamp.slice(0, 4),
        +stamp.slice(4, 6) - 1,
        +stamp.slice(6, 8),
        +stamp.slice(8, 10),
        +stamp.slice(10, 12),
      );
      if (!/^\d{12}$/.test(stamp) || Math.abs(now - at) > SIGNED_TOKEN_MAX_AGE_MS)
        return fail('the SignedSystemToken timestamp is not within 10 minutes of now (yyyyMMddHHmm, UTC)');
      if (token !== options.systemUserToken) return fail('unknown system user token for this tenant');
      const ticket = `7T:${randomBytes(24).toString('base64url')}`;
      tickets.set(ticket, { context, expiresAt: now + options.ticketLifetimeMs });
      const claims = {
        [TICKET_CLAIM]: ticket,
        'http://schemes.superoffice.net/identity/ctx': context,
        'http://schemes.superoffice.net/identity/webapi_url': webApiUrl(context),
        exp: Math.floor((now + options.ticketLifetimeMs) / 1000),
      };
      return { status: 200, body: { IsSuccessful: true, ErrorMessage: '', Token: jwt(claims) } };
    },
    /**
     * Why a call to `context`'s API is refused (401), or undefined: Basic with the configured user,
     * or `SOTicket <ticket>` of this tenant, not expired (each use slides it), with `SO-AppToken`.
     */
    refuse(context: string, headers: Record<string, string | string[] | undefined>, now = Date.now()) {
      const authorization = String(headers.authorization ?? '');
      const [scheme = '', credentials = ''] = authorization.split(/\s+/, 2);
      if (scheme.toLowerCase() === 'basic') {
        const expected = Buffer.from(`${options.user}:${options.password}`).toString('base64');
        return credentials === expected ? undefined : 'wrong user or password';
      }
      if (scheme.toLowerCase() === 'soticket') {
        const held = tickets.get(credentials);
        if (held === undefined || held.context !== context) return 'unknown ticket for this tenant';
        if (now >= held.expiresAt) {
          tickets.delete(credentials);
          return 'the ticket has expired: authenticate again';
        }
        if (headers['so-apptoken'] !== options.applicationToken) return 'SO-AppToken is missing or wrong';
        held.expiresAt = now + options.ticketLifetimeMs;
        return undefined;
      }
      return 'Authorization must be Basic or SOTicket (with SO-AppToken)';
    },
  };
}

export type CrmAuth = ReturnType<typeof createAuth>;
