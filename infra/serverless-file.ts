import { readFileSync } from 'node:fs';
import { load } from 'js-yaml';

/** serverless.yml, at the repository's root. */
export const SERVERLESS_YML = new URL('../serverless.yml', import.meta.url);

/**
 * serverless.yml (or the file at `path`) parsed as YAML, its `${...}` variables left as written: the
 * one loader of it; each reader (definitions, alarms, the local runtime's functions) parses the part it
 * needs with its own schema.
 */
export function loadServerless(path: string | URL = SERVERLESS_YML): unknown {
  return load(readFileSync(path, 'utf8'));
}
