import { createHash, createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';

/** Secrets: `fallback` for every context, overridden per ContextIdentifier by `byContext`. */
export interface SecretConfig {
  fallback: readonly string[];
  byContext: Readonly<Record<string, readonly string[]>>;
}

/** Which configured secret signed a body (an opaque handle; never the secret itself). */
export interface SecretMatch {
  readonly index: number;
}

export interface SignatureVerifier {
  /** True when at least one secret is configured anywhere. */
  readonly hasSecrets: boolean;
  /**
   * The secret whose HMAC over `body` equals `signature`, or undefined. Constant time per secret. With
   * `context` (a hint read from the raw body, not trusted), that context's own secrets are tried
   * first: with hundreds of tenants, one HMAC or two instead of one per secret of every tenant.
   */
  match(body: string | Uint8Array, signature: string, context?: string): SecretMatch | undefined;
  /** True when `match` came from a secret that is valid for `context`. */
  allows(context: string, match: SecretMatch): boolean;
  /** True when `context` has at least one secret (its own or the fallback). */
  hasSecretFor(context: string): boolean;
}

const SIGNATURE_FORMAT = /^[A-Za-z0-9+/]{43}=?$/;

/**
 * Builds the HMAC-SHA256 verifier. Several secrets can be valid at once (rotation without downtime);
 * the body is checked against every distinct secret before it is parsed, and the match is then
 * bound to the body's ContextIdentifier with {@link SignatureVerifier.allows}.
 *
 * @example
 * const verifier = createSignatureVerifier({ fallback: ['old', 'new'], byContext: { Cust1: ['c1'] } });
 * const match = verifier.match(rawBody, signatureHeader);
 * if (match && verifier.allows(body.ContextIdentifier, match)) { ... }
 */
export function createSignatureVerifier(config: SecretConfig): SignatureVerifier {
  const secrets = [...new Set([...config.fallback, ...Object.values(config.byContext).flat()])];
  const index = new Map(secrets.map((secret, i) => [secret, i]));
  const fallback = new Set(config.fallback.map((secret) => index.get(secret)!));
  const byContext = new Map(
    Object.entries(config.byContext).map(([context, list]) => [
      context,
      new Set(list.map((s) => index.get(s)!)),
    ]),
  );
  const allowedFor = (context: string) => byContext.get(context) ?? fallback;
  // Imported once: a KeyObject spares every request the key set-up of a string secret.
  const keys = secrets.map((secret) => createSecretKey(Buffer.from(secret, 'utf8')));

  return {
    hasSecrets: secrets.length > 0,
    match(body, signature, context) {
      const candidate = signature.trim();
      if (!SIGNATURE_FORMAT.test(candidate)) return undefined;
      const provided = Buffer.from(candidate, 'base64');
      if (provided.length !== 32) return undefined;
      const matches = (i: number) =>
        timingSafeEqual(createHmac('sha256', keys[i]!).update(body).digest(), provided);
      const own = context === undefined ? undefined : byContext.get(context);
      for (const i of own ?? []) if (matches(i)) return { index: i };
      let found: SecretMatch | undefined;
      for (let i = 0; i < keys.length; i++) {
        if (own?.has(i)) continue;
        if (matches(i) && found === undefined) found = { index: i };
      }
      return found;
    },
    allows: (context, match) => allowedFor(context).has(match.index),
    hasSecretFor: (context) => allowedFor(context).size > 0,
  };
}

/** Compares two strings in constant time (for tokens): equal lengths are not required. */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
