import { createPrivateKey, createSign } from 'node:crypto';
import type { SystemUserCredentials } from '../../config/crm.js';

/** The JWT claim that carries the ticket (crm-rest-api.md). */
const TICKET_CLAIM = 'http://schemes.superoffice.net/identity/ticket';

/**
 * `<token>.<yyyyMMddHHmm UTC>.<signature>`: the system user token and the minute, signed with the
 * app's RSA private key (SHA-256, base64), as the Authenticate endpoint expects it.
 */
export function signSystemToken(token: string, privateKeyPem: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-T:]/g, '').slice(0, 12);
  const data = `${token}.${stamp}`;
  return `${data}.${createSign('RSA-SHA256').update(data).sign(createPrivateKey(privateKeyPem), 'base64')}`;
}

/** The body of `POST /Login/api/PartnerSystemUser/Authenticate` for a tenant. */
export function authenticateBody(credentials: SystemUserCredentials, context: string, now = new Date()) {
  return {
    SignedSystemToken: signSystemToken(credentials.systemUserToken, credentials.privateKey, now),
    ApplicationToken: credentials.applicationToken,
    ContextIdentifier: context,
    ReturnTokenType: 'JWT',
  };
}

/**
 * The ticket in an Authenticate answer (`{IsSuccessful, ErrorMessage, Token}` with a JWT), or the
 * reason there is none. The JWT came over TLS from the endpoint just called; its signature is not
 * checked here (the vendor's certificate is not configured).
 */
export function ticketOf(answer: unknown): { ticket: string } | { refused: string } {
  const { IsSuccessful, ErrorMessage, Token } = (answer ?? {}) as Record<string, unknown>;
  if (IsSuccessful !== true || typeof Token !== 'string')
    return {
      refused: typeof ErrorMessage === 'string' && ErrorMessage ? ErrorMessage : 'IsSuccessful is not true',
    };
  try {
    const payload = JSON.parse(
      Buffer.from(Token.split('.')[1] ?? '', 'base64url').toString('utf8'),
    ) as Record<string, unknown>;
    const ticket = payload[TICKET_CLAIM];
    if (typeof ticket === 'string' && ticket !== '') return { ticket };
  } catch {
    // fall through: no readable claim
  }
  return { refused: `the JWT carries no ${TICKET_CLAIM} claim` };
}
