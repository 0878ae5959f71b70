import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

/** Every CLI of the project, as `npm run <name>` runs it. */
const CLIS: Record<string, string> = {
  send: 'tools/send.ts',
  simulate: 'tools/simulate-cli.ts',
  crm: 'tools/crm/main.ts',
  ops: 'scripts/ops.ts',
  capacity: 'scripts/capacity.ts',
  bench: 'test/bench/run.ts',
};

describe.each(Object.entries(CLIS))('npm run %s', (name, script) => {
  it('a bad option is one line naming it and the option list, exit 2; --help explains every option, exit 0', async () => {
    const bad = await runCli(script, ['--no-such-option'], { ENV_FILE: '/nonexistent/.env' });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.errors).toEqual([
      "Unknown option '--no-such-option'",
      expect.stringMatching(new RegExp(`^options: .*--help \\(npm run ${name} -- --help says more\\)$`)),
    ]);
    const options = [...bad.errors[1]!.matchAll(/--[a-z-]+/g)].map((m) => m[0]).slice(0, -1);

    const help = await runCli(script, ['--help'], { ENV_FILE: '/nonexistent/.env' });
    expect(help).toMatchObject({ code: 0, errors: [] });
    expect(help.stdout).toMatch(/^Usage: npm run /m);
    for (const option of options) expect(help.stdout, option).toContain(option);
  });
});
