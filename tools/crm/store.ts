import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TableRows } from './changes.js';
import { CrmError } from './errors.js';
import type { TenantStatus } from './tenant-state.js';
import type { Webhook } from './webhooks.js';

/** Everything the simulated CRM holds for one context (tenant). */
export interface ContextData {
  name: string;
  /** Rows by table, then by primary key. */
  rows: Record<string, TableRows>;
  nextId: Record<string, number>;
  webhooks: Webhook[];
  nextWebhookId: number;
  /** Events discarded after their third failed attempt, every webhook together. */
  discarded: number;
  /** The tenant's state and host (Running at its first address when absent). */
  tenant?: TenantStatus;
}

export interface CrmStore {
  readonly dir: string;
  /** The context's data, created empty on first use; throws for a name that is not an identifier. */
  context(name: string): ContextData;
  /** Contexts that exist (loaded or on disk). */
  names(): string[];
  /** Writes the context's file (atomically: a whole file or the previous one, even after kill -9). */
  save(name: string): void;
}

const CONTEXT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A store of contexts under `dir`, one JSON file per context, read when first used. */
export function openStore(dir: string): CrmStore {
  mkdirSync(dir, { recursive: true });
  const loaded = new Map<string, ContextData>();
  const file = (name: string) => join(dir, `${name}.json`);
  const context = (name: string): ContextData => {
    if (!CONTEXT_NAME.test(name))
      throw new CrmError(
        `context ${JSON.stringify(name)} is not accepted: letters, digits, _ and -, up to 64`,
      );
    let data = loaded.get(name);
    if (data !== undefined) return data;
    try {
      data = JSON.parse(readFileSync(file(name), 'utf8')) as ContextData;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new Error(
          `${file(name)} cannot be read (${(error as Error).message}): move it away to start empty`,
        );
      data = { name, rows: {}, nextId: {}, webhooks: [], nextWebhookId: 1, discarded: 0 };
    }
    loaded.set(name, data);
    return data;
  };
  return {
    dir,
    context,
    names: () =>
      [
        ...new Set([
          ...loaded.keys(),
          ...readdirSync(dir)
            .filter((entry) => entry.endsWith('.json'))
            .map((entry) => entry.slice(0, -5)),
        ]),
      ].filter((name) => CONTEXT_NAME.test(name)),
    save(name) {
      const data = loaded.get(name);
      if (data === undefined) return;
      const temporary = `${file(name)}.${process.pid}.tmp`;
      writeFileSync(temporary, JSON.stringify(data));
      renameSync(temporary, file(name));
    },
  };
}
