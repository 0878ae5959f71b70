import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { ALL_QUEUE_KEYS, queueOutputs, TABLE_KEYS, tableOutput } from '../../infra/definitions.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('the stack outputs ops reads (infra/definitions.ts)', () => {
  it('names only outputs infra/resources.yml declares, for every queue and table', () => {
    const resources = load(readFileSync(join(ROOT, 'infra', 'resources.yml'), 'utf8')) as {
      Outputs: Record<string, unknown>;
    };
    const named = [
      ...ALL_QUEUE_KEYS.flatMap((key) => Object.values(queueOutputs(key))),
      ...TABLE_KEYS.map(tableOutput),
    ];
    expect(named.filter((name) => !Object.hasOwn(resources.Outputs, name))).toEqual([]);
  });
});
