import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

/** Every IAM statement of the stack's roles (infra/iam.yml), wherever it sits. */
function statements(node: unknown): Array<{ Action: unknown; Resource: unknown }> {
  if (Array.isArray(node)) return node.flatMap(statements);
  if (typeof node !== 'object' || node === null) return [];
  const here =
    'Action' in node && 'Effect' in node ? [node as unknown as { Action: unknown; Resource: unknown }] : [];
  return [...here, ...Object.values(node).flatMap(statements)];
}

/** The roles of infra/iam.yml by logical id, each with its statements. */
function roles(): Array<[string, Array<{ Action: unknown; Resource: unknown }>]> {
  const doc = load(readFileSync(join(ROOT, 'infra', 'iam.yml'), 'utf8')) as { Resources: object };
  return Object.entries(doc.Resources).map(([id, role]) => [id, statements(role)]);
}

const writesSsm = (statement: { Action: unknown }) =>
  [statement.Action].flat().some((action) => /^ssm:(\*|Put|Delete|Label)/.test(String(action)));
const onSecrets = (statement: { Resource: unknown }) =>
  String(JSON.stringify(statement.Resource)).includes('secretsParameter');

describe('the secrets parameter', () => {
  it('is written by one role alone, the scheduled retirement of due secrets (and by ops), and that role writes nothing else in SSM', () => {
    const writers = roles().filter(([, found]) => found.some(writesSsm));
    expect(writers.map(([id]) => id)).toEqual(['RetireSecretsRole']);
    const writes = writers.flatMap(([, found]) => found.filter(writesSsm));
    expect(writes).toHaveLength(1);
    expect([writes[0]!.Action].flat()).toEqual(['ssm:GetParameter', 'ssm:PutParameter']);
    expect([writes[0]!.Resource].flat()).toHaveLength(1);
    expect(onSecrets(writes[0]!)).toBe(true);
  });

  it('is only read by every other role that names it: the ingest may never write it', () => {
    const others = roles().filter(([id]) => id !== 'RetireSecretsRole');
    const reading = others.flatMap(([, found]) => found.filter(onSecrets));
    expect(others.map(([id]) => id)).toContain('IngestRole');
    expect(reading.length).toBeGreaterThan(0);
    for (const statement of reading) expect([statement.Action].flat()).toEqual(['ssm:GetParameter']);
  });
});
