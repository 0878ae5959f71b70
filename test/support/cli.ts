import { execFile } from 'node:child_process';
import { join } from 'node:path';

/** The repository root, where the scripts run from. */
export const CLI_ROOT = join(import.meta.dirname, '..', '..');
const TSX = join(CLI_ROOT, 'node_modules', '.bin', 'tsx');

export interface CliRun {
  code: number;
  stdout: string;
  /** Standard error, line by line, without empty lines. */
  errors: string[];
}

/**
 * Runs a script of the repository as `npm run` would (tsx, from the root), with `env` over this process's
 * environment, where `undefined` removes a variable; resolves with its exit code and output.
 */
export function runCli(
  script: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<CliRun> {
  const merged: Record<string, string | undefined> = { ...process.env, ...env };
  for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key];
  return new Promise((resolve) => {
    execFile(TSX, [script, ...args], { cwd: CLI_ROOT, env: merged }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, errors: stderr.split('\n').filter((line) => line !== '') });
    });
  });
}
