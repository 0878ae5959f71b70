import { createPrivateKey, createSign } from 'node:crypto';
import * as z from 'zod/mini';
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

/** The Authenticate answer: `{IsSuccessful, ErrorMessage, Token}`, the token a JWT when it succeeded. */
export const AuthenticateAnswerSchema = z.looseObject({
  IsSuccessful: z.boolean(),
  ErrorMessage: z.optional(z.nullable(z.string())),
  Token: z.optional(z.nullable(z.string())),
});
export type AuthenticateAnswer = z.infer<typeof AuthenticateAnswerSchema>;

/** The JWT's payload: the ticket claim, the rest ignored. */
const TicketClaimSchema = z.looseObject({ [TICKET_CLAIM]: z.string().check(z.minLength(1)) });

/**
 * The ticket in an Authenticate answer (its JWT's ticket claim), or the reason there is none. The JWT
 * came over TLS from the endpoint just called; its signature is not checked here (the vendor's
 * certificate is not configured).
 */
export function ticketOf({
  IsSuccessful,
  ErrorMessage,
  Token,
}: AuthenticateAnswer): { ticket: string } | { refused: string } {
  if (IsSuccessful !== true || typeof Token !== 'string')
    return { refused: ErrorMessage || 'IsSuccessful is not true' };
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(Token.split('.')[1] ?? '', 'base64url').toString('utf8'));
  } catch {
    // no readable claim
  }
  const claims = z.safeParse(TicketClaimSchema, payload);
  if (claims.success) return { ticket: claims.data[TICKET_CLAIM] };
  return { refused: `the JWT carries no ${TICKET_CLAIM} claim` };
}
