import type { CrmCredentials } from '../config/crm.js';
import type { Authorizer } from './auth/index.js';

/** What the CRM's text keeps at most: one short line (logs, the gap's card, the failed event, the store). */
export const MAX_CRM_TEXT_CHARS = 300;
const REDACTED = '[redacted]';
/** Credentials seen in use (tickets, signed tokens) kept to be removed; the oldest forgotten past this. */
const MAX_SEEN = 256;
/** A known value shorter than this is not searched for (it would cut ordinary words apart). */
const MIN_SECRET_CHARS = 4;
/**
 * What of the CRM's text is read at all (an `ErrorMessage` may be megabytes): enough that a secret
 * starting inside the line kept (a private key is about 1.7 KB) is still whole when it is searched for.
 */
const MAX_READ_CHARS = 8192;

/** Shapes of a credential, whoever's: PEM blocks, a scheme and its token, JWTs, tickets, long base64 or hex runs. */
const SHAPES: Array<[RegExp, string | ((match: string) => string)]> = [
  [/-----BEGIN[^-]*-----[\s\S]*?(?:-----END[^-]*-----|$)/g, REDACTED],
  [/\b(SOTicket|Bearer|Basic)(\s+)(?=[^\s"',;]*[\d+/=:._-])[^\s"',;]{6,}/gi, `$1$2${REDACTED}`],
  [/\beyJ[\w-]*\.[\w-]*(?:\.[\w-]*)?/g, REDACTED],
  [/\b\d+T:[A-Za-z0-9+/=_-]+/g, REDACTED],
  // A run of base64/hex characters: a secret when long, or when it mixes digits in (not a word).
  [/[A-Za-z0-9+=_-]{24,}/g, (run) => (run.length >= 40 || /\d/.test(run) ? REDACTED : run)],
];

/**
 * Removes every credential from text the CRM supplies (its error reasons, a webhook's last error, an
 * echo of a request): the known values (`known()`: each tenant's system user token, app token,
 * private key, Basic password; the tickets, signed tokens and headers seen in use), in their plain,
 * JSON-escaped and base64 forms, then anything shaped like one; the result is one line of at most
 * {@link MAX_CRM_TEXT_CHARS}. The CRM client applies it at its boundary, so nothing it throws or
 * answers carries a credential into a log, the store, the dashboard or the bus.
 *
 * @example scrubText('refused SOTicket 7T:abc… for token 9f8e…', ['9f8e…']) // 'refused SOTicket [redacted] for token [redacted]'
 */
export function scrubText(text: string, known: Iterable<string> = []): string {
  return scrubForms(text, formsOfAll(known));
}

/** {@link scrubText} with the known values' forms already listed, longest first ({@link formsOfAll}). */
function scrubForms(text: string, forms: readonly string[]): string {
  let out = text.slice(0, MAX_READ_CHARS);
  for (const form of forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
  for (const [shape, replacement] of SHAPES)
    out = out.replace(shape, replacement as string & ((match: string) => string));
  const line = out.replace(/\s+/g, ' ').trim();
  return line.length <= MAX_CRM_TEXT_CHARS ? line : `${line.slice(0, MAX_CRM_TEXT_CHARS - 1)}…`;
}

/** Every form of every value, longest first (so a value inside another is removed after it). */
function formsOfAll(values: Iterable<string>): string[] {
  return [...new Set([...values].flatMap(formsOf))].sort((a, b) => b.length - a.length);
}

/** A value as it may appear in text: itself, JSON-escaped, base64(url), URL-encoded; each line of a PEM too. */
function formsOf(value: string): string[] {
  if (value.length < MIN_SECRET_CHARS) return [];
  const lines = value.includes('\n') ? value.split(/\r?\n/).filter((l) => l.length >= 16) : [];
  return [
    value,
    JSON.stringify(value).slice(1, -1),
    Buffer.from(value).toString('base64'),
    Buffer.from(value).toString('base64url'),
    encodeURIComponent(value),
    ...lines,
  ];
}

/** The secret values of credentials (a Basic user name is no secret; its password and `user:password` are). */
export function secretsOf(credentials: CrmCredentials): string[] {
  return credentials.type === 'basic'
    ? [credentials.password, `${credentials.user}:${credentials.password}`]
    : [credentials.systemUserToken, credentials.applicationToken, credentials.privateKey];
}

/**
 * The secrets one CRM client knows: every tenant's configured credentials, and those it saw in use
 * (header values, tickets, signed tokens), the newest {@link MAX_SEEN} of them.
 */
export function createSecretSet(credentials: Record<string, CrmCredentials>) {
  const fixed = formsOfAll(Object.values(credentials).flatMap(secretsOf));
  const seen = new Set<string>();
  return {
    /** Remembers a value sent to the CRM as a credential (and the token after its scheme word). */
    add(value: string) {
      for (const part of [value, value.split(' ').at(-1) ?? '']) {
        if (part.length < MIN_SECRET_CHARS) continue;
        seen.delete(part);
        seen.add(part);
        if (seen.size > MAX_SEEN) seen.delete(seen.values().next().value as string);
      }
    },
    scrub: (text: string) => scrubForms(text, [...formsOfAll(seen), ...fixed]),
  };
}

export type SecretSet = ReturnType<typeof createSecretSet>;

/** `authorizer`, each header value it hands out (a ticket, an app token) remembered in `secrets`. */
export function remembering(authorizer: Authorizer, secrets: SecretSet): Authorizer {
  return {
    async headers(context) {
      const headers = await authorizer.headers(context);
      for (const value of Object.values(headers)) secrets.add(value);
      return headers;
    },
    renew: (context, used) => authorizer.renew(context, used),
  };
}

/**
 * Every method of `api` with what it throws scrubbed ({@link scrubError}): the CRM client's one error
 * boundary.
 */
export function scrubbing<T extends Record<string, unknown>>(api: T, secrets: SecretSet): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(api))
    wrapped[name] =
      typeof member === 'function'
        ? async (...args: unknown[]) => {
            try {
              return await member(...args);
            } catch (error) {
              throw scrubError(error, secrets);
            }
          }
        : member;
  return wrapped as T;
}

/** The same error with its message scrubbed and no cause (a cause may quote the CRM's answer). */
export function scrubError<T>(error: T, secrets: SecretSet): T {
  if (!(error instanceof Error)) return new Error(secrets.scrub(String(error))) as T;
  error.message = secrets.scrub(error.message);
  if ('cause' in error) delete error.cause;
  if (error.stack !== undefined) error.stack = `${error.name}: ${error.message}`;
  return error;
}
