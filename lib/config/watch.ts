import { ConfigError, optionalEnv } from './env.js';

type Env = Record<string, string | undefined>;

/** Which webhooks the poll sets Active again: none, those the CRM disabled for errors, or Stopped ones too. */
export type ReactivatePolicy = 'off' | 'too-many-errors' | 'stopped-too';

/** The watch of the receiver's webhooks in the CRM. */
export interface WatchConfig {
  /** RECONCILE_POLL_SECONDS: seconds between two polls of the CRM's webhooks (default 300, at least 10). */
  pollSeconds: number;
  /** REACTIVATE_WEBHOOKS: `true` (default: TooManyErrors only), `false`, or `stopped-too`. */
  reactivate: ReactivatePolicy;
  /** RECEIVER_URL: when set, only the CRM's webhooks whose TargetUrl starts with it are the receiver's. */
  receiverUrl: string | undefined;
  /** RECONCILE_FULL_HOURS: hours between two full passes of each context (0, the default: none). */
  fullHours: number;
  /** RECONCILE_POLL_MAX_IN_FLIGHT: contexts polled at once, each one CRM request at a time (default 64). */
  pollMaxInFlight: number;
}

export const DEFAULT_POLL_SECONDS = 300;
export const MIN_POLL_SECONDS = 10;
/** The longest interval between two scheduled full passes: a year. */
export const MAX_FULL_HOURS = 8760;
/**
 * Contexts one poll serves at once (so CRM requests in flight): far below Lambda's 1,024 file
 * descriptors, which the SDK clients share, and enough for about 2,560 contexts a minute at 3 calls of
 * 0.5 s each (docs/workers.md, "The poll against a hostile CRM").
 */
export const DEFAULT_POLL_MAX_IN_FLIGHT = 64;
const MAX_POLL_IN_FLIGHT = 512;

/**
 * Reads the watch's environment once, strictly: each wrong value is a one-line ConfigError naming the
 * variable and what it accepts.
 */
export function readWatchConfig(env: Env = process.env): WatchConfig {
  return {
    pollSeconds: pollSeconds(optionalEnv('RECONCILE_POLL_SECONDS', env)),
    reactivate: reactivate(optionalEnv('REACTIVATE_WEBHOOKS', env)),
    receiverUrl: receiverUrl(optionalEnv('RECEIVER_URL', env)),
    fullHours: fullHours(optionalEnv('RECONCILE_FULL_HOURS', env)),
    pollMaxInFlight: pollMaxInFlight(optionalEnv('RECONCILE_POLL_MAX_IN_FLIGHT', env)),
  };
}

function pollSeconds(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_POLL_SECONDS;
  const value = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < MIN_POLL_SECONDS)
    throw new ConfigError(
      `RECONCILE_POLL_SECONDS must be a whole number of seconds, at least ${MIN_POLL_SECONDS} (default ${DEFAULT_POLL_SECONDS})`,
      'RECONCILE_POLL_SECONDS',
    );
  return value;
}

function fullHours(raw: string | undefined): number {
  if (raw === undefined) return 0;
  const value = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || value > MAX_FULL_HOURS)
    throw new ConfigError(
      `RECONCILE_FULL_HOURS must be a whole number of hours from 1 to ${MAX_FULL_HOURS} between two full passes of every row, or 0 (the default: none)`,
      'RECONCILE_FULL_HOURS',
    );
  return value;
}

function pollMaxInFlight(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_POLL_MAX_IN_FLIGHT;
  const value = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || value < 1 || value > MAX_POLL_IN_FLIGHT)
    throw new ConfigError(
      `RECONCILE_POLL_MAX_IN_FLIGHT must be a whole number from 1 to ${MAX_POLL_IN_FLIGHT}: the CRM requests one poll has in flight at once (default ${DEFAULT_POLL_MAX_IN_FLIGHT})`,
      'RECONCILE_POLL_MAX_IN_FLIGHT',
    );
  return value;
}

function reactivate(raw: string | undefined): ReactivatePolicy {
  const value = raw?.trim().toLowerCase();
  if (value === undefined || value === 'true' || value === '1') return 'too-many-errors';
  if (value === 'false' || value === '0') return 'off';
  if (value === 'stopped-too') return 'stopped-too';
  throw new ConfigError(
    'REACTIVATE_WEBHOOKS must be true (default: webhooks the CRM disabled for errors), false, or stopped-too (also those a person stopped)',
    'REACTIVATE_WEBHOOKS',
  );
}

function receiverUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  try {
    const url = new URL(raw.trim());
    if (url.protocol === 'https:' || url.protocol === 'http:') return url.href;
  } catch {
    // refused below
  }
  throw new ConfigError(
    'RECEIVER_URL must be the http(s) URL the CRM delivers to (its webhooks TargetUrl), for example https://abc.execute-api.eu-west-1.amazonaws.com/webhook',
    'RECEIVER_URL',
  );
}
