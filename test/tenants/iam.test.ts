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

describe('the secrets parameter', () => {
  it('is only read by the stack: no role may write it (the tenant commands of ops alone do)', () => {
    const all = statements(load(readFileSync(join(ROOT, 'infra', 'iam.yml'), 'utf8')));
    const onSecrets = all.filter((statement) =>
      String(JSON.stringify(statement.Resource)).includes('secretsParameter'),
    );
    expect(onSecrets.length).toBeGreaterThan(0);
    for (const statement of onSecrets) expect([statement.Action].flat()).toEqual(['ssm:GetParameter']);
    const writes = all.filter((statement) =>
      [statement.Action].flat().some((action) => /^ssm:(\*|Put|Delete|Label)/.test(String(action))),
    );
    expect(writes).toEqual([]);
  });
});
