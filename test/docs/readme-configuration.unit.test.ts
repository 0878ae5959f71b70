import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { expect, it } from 'vitest';
import { QUEUE_ENV_VARS } from '../../infra/definitions.js';

const ROOT = join(import.meta.dirname, '..', '..');

interface ServerlessFile {
  custom: { ingestEnvironment: Record<string, Record<string, unknown>> };
  functions: Record<string, { environment?: Record<string, unknown> | string }>;
}

it('the README documents, in a table row, every variable serverless.yml gives a function', () => {
  const serverless = load(readFileSync(join(ROOT, 'serverless.yml'), 'utf8')) as ServerlessFile;
  const given = new Set<string>(Object.values(QUEUE_ENV_VARS));
  for (const settings of Object.values(serverless.custom.ingestEnvironment)) {
    for (const name of Object.keys(settings)) given.add(name);
  }
  for (const fn of Object.values(serverless.functions)) {
    if (typeof fn.environment === 'object') for (const name of Object.keys(fn.environment)) given.add(name);
  }
  const rows = readFileSync(join(ROOT, 'README.md'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => line.split(' | ')[0]!);
  const documented = new Set(
    rows.flatMap((cell) => [...cell.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!)),
  );
  expect(given.size).toBeGreaterThan(15);
  expect([...given].filter((name) => !documented.has(name))).toEqual([]);
});
