import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** The secrets parameter's name in the local runtime (WEBHOOK_SECRETS_PARAMETER). */
export const LOCAL_SECRETS_PARAMETER = '/local/webhook-secrets';

/** How long the local ingest caches the secrets parameter: a change is in force within about a second. */
export const LOCAL_SECRETS_MAX_AGE_SECONDS = 1;

export interface LocalSsm {
  endpoint: string;
  close(): Promise<void>;
}

type Stored = Record<string, { value: string; version: number }>;

const parametersFile = (dataDir: string) => join(dataDir, 'ssm-parameters.json');

/**
 * The secrets the tenant commands wrote for `context` into DATA_DIR's secrets parameter, newest first
 * (none when they wrote none): what a local sender signs an onboarded tenant's deliveries with.
 */
export function tenantSecrets(dataDir: string, context: string): string[] {
  try {
    const stored = JSON.parse(readFileSync(parametersFile(dataDir), 'utf8')) as Stored;
    const set = JSON.parse(stored[LOCAL_SECRETS_PARAMETER]?.value ?? '{}') as Record<string, unknown>;
    const secrets = set[context];
    return Array.isArray(secrets)
      ? secrets.filter((secret): secret is string => typeof secret === 'string')
      : [];
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new Error(`${parametersFile(dataDir)} cannot be read (${(error as Error).message})`);
  }
}

/**
 * SSM's GetParameter and PutParameter on 127.0.0.1, kept in DATA_DIR/ssm-parameters.json: the local
 * ingest reads its secrets parameter through the same call it makes on AWS, and the tenant commands
 * write it the same way. The secrets parameter reads as WEBHOOK_SECRETS (`fallback`) with what was
 * written over it, context by context.
 */
export async function startLocalSsm(dataDir: string, fallback: () => string | undefined): Promise<LocalSsm> {
  const file = parametersFile(dataDir);
  const load = (): Stored => {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Stored;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw new Error(`${file} cannot be read (${(error as Error).message}): move it away to start empty`);
    }
  };
  const current = (name: string, stored: Stored): string | undefined => {
    const own = stored[name]?.value;
    if (name !== LOCAL_SECRETS_PARAMETER) return own;
    const base = fallback();
    if (base === undefined) return own ?? '{}';
    return JSON.stringify({ ...JSON.parse(base), ...JSON.parse(own ?? '{}') });
  };
  const answer = (target: string, input: { Name?: string; Value?: string }) => {
    const stored = load();
    const name = String(input.Name ?? '');
    if (target === 'AmazonSSM.GetParameter') {
      const value = current(name, stored);
      if (value === undefined) return { status: 400, body: { __type: 'ParameterNotFound', message: name } };
      const version = stored[name]?.version ?? 1;
      return {
        status: 200,
        body: { Parameter: { Name: name, Type: 'SecureString', Value: value, Version: version } },
      };
    }
    if (target === 'AmazonSSM.PutParameter' && typeof input.Value === 'string') {
      const version = (stored[name]?.version ?? 0) + 1;
      stored[name] = { value: input.Value, version };
      writeFileSync(`${file}.tmp`, JSON.stringify(stored), { mode: 0o600 });
      renameSync(`${file}.tmp`, file);
      return { status: 200, body: { Version: version, Tier: 'Standard' } };
    }
    return { status: 400, body: { __type: 'InvalidAction', message: `${target} is not served locally` } };
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let result: { status: number; body: unknown };
      try {
        result = answer(
          String(req.headers['x-amz-target'] ?? ''),
          JSON.parse(Buffer.concat(chunks).toString('utf8')),
        );
      } catch (error) {
        result = { status: 500, body: { __type: 'InternalServerError', message: (error as Error).message } };
      }
      res.writeHead(result.status, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(result.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
