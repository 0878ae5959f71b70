import * as z from 'zod/mini';
import type { CrmWebhook } from '../crm/index.js';
import { DATA_WEBHOOK_NAME, STATE_WEBHOOK_NAME } from './deps.js';

/** The receiver's two webhooks in a tenant, its duplicates, and the webhooks of others delivering to it. */
export interface FoundWebhooks {
  data: CrmWebhook | undefined;
  state: CrmWebhook | undefined;
  /** Further webhooks of the receiver's names and URL (a run that raced an older version): deleted. */
  duplicates: CrmWebhook[];
  /** Webhooks of the same TargetUrl made by someone else: reported, never changed. */
  foreign: CrmWebhook[];
}

/** The tenant's webhooks sorted out by name and TargetUrl (the lowest WebhookId of each name is kept). */
export function findWebhooks(webhooks: readonly CrmWebhook[], targetUrl: string): FoundWebhooks {
  const sameUrl = [...webhooks]
    .filter((webhook) => sameTarget(webhook.TargetUrl, targetUrl))
    .sort((a, b) => a.WebhookId - b.WebhookId);
  const named = (name: string) => sameUrl.filter((webhook) => webhook.Name === name);
  const [data, ...moreData] = named(DATA_WEBHOOK_NAME);
  const [state, ...moreState] = named(STATE_WEBHOOK_NAME);
  return {
    data,
    state,
    duplicates: [...moreData, ...moreState],
    foreign: sameUrl.filter(
      (webhook) => webhook.Name !== DATA_WEBHOOK_NAME && webhook.Name !== STATE_WEBHOOK_NAME,
    ),
  };
}

/** The state webhook's Events for the data webhook `id`. */
export function stateEventsOf(id: number): string[] {
  return ['started', 'stopped', 'errors'].map((verb) => `webhook${id}.${verb}`);
}

/** The same list of event names, in any order. */
export function sameEvents(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');
}

/** The header that carries STATE_EVENT_TOKEN on the state webhook's deliveries. */
export const TOKEN_HEADER = 'X-Receiver-Token';

const HeadersSchema = z.record(z.string(), z.string());

/**
 * The state webhook's Headers: the ones it has (someone may have added theirs), with the receiver's
 * token header set to `token`, or removed when none is set.
 */
export function stateHeaders(shown: unknown, token: string | undefined): Record<string, string> {
  const headers = Object.entries(z.safeParse(HeadersSchema, shown ?? {}).data ?? {}).filter(
    ([name]) => name.toLowerCase() !== TOKEN_HEADER.toLowerCase(),
  );
  return Object.fromEntries(token ? [...headers, [TOKEN_HEADER, token]] : headers);
}

/** The same headers, in any order. */
export function sameHeaders(shown: unknown, wanted: Record<string, string>): boolean {
  const parsed = z.safeParse(HeadersSchema, shown ?? {});
  const sorted = (headers: Record<string, string>) => JSON.stringify(Object.entries(headers).sort());
  return parsed.success && sorted(parsed.data) === sorted(wanted);
}

/** Two TargetUrls alike but for case of scheme and host and a trailing slash. */
export function sameTarget(a: string, b: string): boolean {
  const normal = (url: string) => {
    try {
      const parsed = new URL(url);
      return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}${parsed.search}`;
    } catch {
      return url;
    }
  };
  return normal(a) === normal(b);
}

/** One line naming webhooks by id and name (never their secrets or headers). */
export function describeWebhooks(webhooks: readonly CrmWebhook[]): string {
  return webhooks.map((webhook) => `${webhook.WebhookId} (${JSON.stringify(webhook.Name)})`).join(', ');
}
