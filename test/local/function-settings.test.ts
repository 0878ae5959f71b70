import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startLocalRuntime } from '../../local/runtime.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the functions’ settings at the local start', () => {
  it.each([
    ['RECONCILE_POLL_SECONDS', '5', /^RECONCILE_POLL_SECONDS must be a whole number of seconds, at least 10/],
    ['RECONCILE_FULL_HOURS', '9000', /^RECONCILE_FULL_HOURS must be a whole number of hours from 1 to 8760/],
  ])('refuses %s=%s in one line before taking DATA_DIR', async (name, value, message) => {
    const parent = mkdtempSync(join(tmpdir(), 'function-settings-'));
    dirs.push(parent);
    const dataDir = join(parent, 'data');
    await expect(startLocalRuntime({ env: { [name]: value }, dataDir, log: () => {} })).rejects.toThrow(
      message,
    );
    expect(existsSync(dataDir)).toBe(false);
  });
});
