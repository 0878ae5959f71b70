import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';

/**
 * Loads a `.env` file into `env` without overriding what is already set (the environment wins, as
 * with `node --env-file`). Returns the path when a file was read, `undefined` when there is none.
 */
export function loadEnvFile(path: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] === undefined) env[name] = value;
  }
  return path;
}
