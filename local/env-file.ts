import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';

export interface LoadedEnvFile {
  path: string;
  /** The variables the file set (those the environment did not already hold). */
  names: ReadonlySet<string>;
}

/**
 * Loads a `.env` file into `env` without overriding what is already set (the environment wins, as
 * with `node --env-file`). Returns the path and the variables it set when a file was read,
 * `undefined` when there is none.
 */
export function loadEnvFile(path: string, env: NodeJS.ProcessEnv = process.env): LoadedEnvFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const names = new Set<string>();
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    names.add(name);
  }
  return { path, names };
}

/** Where a variable's value came from, for an error message: `in .env` or `in the environment`. */
export function originOf(name: string, file: LoadedEnvFile | undefined): string {
  return file?.names.has(name) ? `in ${file.path}` : 'in the environment';
}
