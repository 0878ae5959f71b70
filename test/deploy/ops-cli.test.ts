import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

/** `npm run ops` as a newcomer meets it: a mistake is one line before any AWS call. */
const home = mkdtempSync(join(tmpdir(), 'ops-home-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** No AWS settings at all (an empty HOME: no ~/.aws), and the SDK's Node-version notice not silenced. */
const bare = {
  HOME: home,
  AWS_REGION: undefined,
  AWS_DEFAULT_REGION: undefined,
  AWS_PROFILE: undefined,
  AWS_ACCESS_KEY_ID: undefined,
  AWS_SECRET_ACCESS_KEY: undefined,
  AWS_SESSION_TOKEN: undefined,
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: undefined,
  // No instance metadata lookup on a machine that is not an EC2 instance.
  AWS_EC2_METADATA_DISABLED: 'true',
};
const ops = (args: string[], env: Record<string, string | undefined> = {}) =>
  runCli('scripts/ops.ts', args, { ...bare, ...env });

describe('npm run ops, when the command line or the AWS setup is wrong', () => {
  it('--help lists every command on standard output, exit 0', async () => {
    const run = await ops(['--help']);
    expect(run.code).toBe(0);
    expect(run.errors).toEqual([]);
    expect(run.stdout).toMatch(/^ {2}redrive-subscription <name>/m);
  });

  it('an unknown command or option is one line naming it, then the options, exit 2', async () => {
    const options = expect.stringMatching(
      /^options: --stage <value> --region <value> .* --help \(npm run ops -- --help says more\)$/,
    );
    const command = await ops(['stats', '--stage', 'dev']);
    expect(command.code).toBe(2);
    expect(command.errors).toEqual([
      expect.stringMatching(/^unknown command stats; usage: npm run ops -- </),
      options,
    ]);
    const option = await ops(['status', '--stage', 'dev', '--stgae', 'x']);
    expect(option.code).toBe(2);
    expect(option.errors).toEqual(["Unknown option '--stgae'", options]);
  });

  it('a missing region is one line saying what to set, without the SDK’s notice, exit 1', async () => {
    const run = await ops(['status', '--stage', 'dev']);
    expect(run).toEqual({
      code: 1,
      stdout: '',
      errors: ['no AWS region: set AWS_REGION (or a profile with a region in AWS_PROFILE), or pass --region'],
    });
  });

  it('missing credentials are one line saying what to set, exit 1', async () => {
    const run = await ops(['status', '--stage', 'dev', '--region', 'eu-west-1']);
    expect(run.code).toBe(1);
    expect(run.errors).toEqual([expect.stringMatching(/^no AWS credentials: set AWS_PROFILE /)]);
  });
});
