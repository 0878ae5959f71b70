import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { REGION, ROOT } from './package.js';

const dir = mkdtempSync(join(tmpdir(), 'package-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `npm run package` with SUBSCRIPTIONS_FILE naming `yamlText`; fails before bundling, so no packaging lock. */
function packageWith(yamlText: string): Promise<{ code: number; errors: string[] }> {
  const file = join(dir, `subscriptions-${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(file, yamlText);
  return new Promise((resolve) => {
    execFile(
      join(ROOT, 'node_modules', '.bin', 'osls'),
      ['package', '--stage', 'dev', '--region', REGION, '--package', join(dir, 'out')],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          SUBSCRIPTIONS_FILE: file,
          AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
          AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
          SLS_TELEMETRY_DISABLED: '1',
          SLS_NOTIFICATIONS_MODE: 'off',
        },
      },
      (error, stdout, stderr) =>
        resolve({
          code: typeof error?.code === 'number' ? error.code : 0,
          errors: `${stdout}${stderr}`.split('\n').filter((line) => line !== ''),
        }),
    );
  });
}

describe('npm run package, with a subscriptions file it cannot deploy', () => {
  it('prints one line naming the file, the subscription and the place, exit 1', async () => {
    // The README's local walkthrough target: http is for `npm start` alone.
    const run = await packageWith(
      '- name: department-changes\n  pattern:\n    detail-type: [contact.changed]\n  target:\n    url: http://127.0.0.1:4000/department\n',
    );
    expect(run.code).toBe(1);
    expect(run.errors).toEqual([
      expect.stringMatching(
        /subscriptions-\w+\.yml: subscription "department-changes": target\.url must be https/,
      ),
    ]);
  });
});

describe('npm run package, with a subscription that can never match', () => {
  it('warns once, naming the subscription, the field and the nearest known one', async () => {
    const file = join(dir, 'typo.yml');
    writeFileSync(
      file,
      '- name: typo\n  pattern: { detail-typ: [contact.changed] }\n  target: { queue: typo }\n',
    );
    vi.stubEnv('SUBSCRIPTIONS_FILE', file);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const names: Record<string, string> = { 'self:service': 'crm-webhook-receiver', 'sls:stage': 'dev' };
    const resolveVariable = async (name: string) => names[name] ?? '';
    // The bridge osls calls once per variable it resolves from the file.
    const bridge = createRequire(import.meta.url)('../../infra/subscriptions.cjs');
    await bridge({ resolveVariable });
    await bridge({ resolveVariable });
    expect(warn.mock.calls).toEqual([
      [
        'warning: subscription "typo" can never match: detail-typ is no field of a published event (did you mean detail-type?)',
      ],
    ]);
  });
});
