import { readFileSync } from 'node:fs';
import { load } from 'js-yaml';
import * as z from 'zod';

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

const ServerlessLogsSchema = z.object({
  provider: z.object({ logs: z.object({ httpApi: z.object({ format: z.string() }) }) }),
});

/**
 * The HTTP API's access log format as serverless.yml declares it (`provider.logs.httpApi.format`):
 * a JSON object whose values are `$context` variables. test/deploy checks it against the packaged
 * stage, scripts/cost.ts prices a line of it.
 */
export function loadAccessLogFormat(serverlessPath: string | URL = SERVERLESS_YML): string {
  return ServerlessLogsSchema.parse(loadServerless(serverlessPath)).provider.logs.httpApi.format;
}
