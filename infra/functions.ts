import * as z from 'zod';
import { loadServerless, SERVERLESS_YML } from './serverless-file.js';

/** An HTTP API route as serverless.yml declares it (`method` may be `ANY`, `path` may be `$default`). */
export interface Route {
  method: string;
  path: string;
}

/** A function of serverless.yml: what the local runtime runs and the capacity model reads. */
export interface ServerlessFunction {
  name: string;
  /** Module path relative to the repository root, e.g. `functions/ingest.ts`. */
  module: string;
  exportName: string;
  timeoutMs: number;
  httpRoutes: Route[];
  sqs: SqsEventSource[];
}

export interface SqsEventSource {
  /** Logical id of the queue in infra/resources.yml, e.g. `ContactQueue`. */
  queueLogicalId: string;
  batchSize: number;
  maximumConcurrency: number;
}

const HttpApiEventSchema = z.union([
  z.literal('*'),
  z.string(),
  z.object({ method: z.string(), path: z.string() }),
]);
const SqsEventSchema = z.object({
  arn: z.object({ 'Fn::GetAtt': z.tuple([z.string(), z.literal('Arn')]) }),
  batchSize: z.union([z.number(), z.string()]).optional(),
  maximumConcurrency: z.union([z.number(), z.string()]).optional(),
});
const ServerlessSchema = z.object({
  params: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  custom: z.record(z.string(), z.unknown()).optional(),
  provider: z.object({ timeout: z.union([z.number(), z.string()]).optional() }).loose(),
  functions: z.record(
    z.string(),
    z
      .object({
        handler: z.string(),
        timeout: z.union([z.number(), z.string()]).optional(),
        events: z
          .array(z.object({ httpApi: HttpApiEventSchema.optional(), sqs: SqsEventSchema.optional() }).loose())
          .optional(),
      })
      .loose(),
  ),
});

/**
 * The functions serverless.yml deploys, with their HTTP routes, SQS event sources, batch sizes,
 * concurrency and timeouts, so the local runtime wires exactly what the cloud does. `${param:x}` takes
 * `params[x]` if given (as `--param` would), else the default stage's value, and `${self:custom.x}` the
 * custom section's; nothing else is resolved.
 */
export function loadFunctions(
  path: string | URL = SERVERLESS_YML,
  params: Record<string, unknown> = {},
): ServerlessFunction[] {
  const config = ServerlessSchema.parse(loadServerless(path));
  const resolve = (value: number | string | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    if (typeof value === 'number') return value;
    const resolved = value.replace(
      /\$\{(param|self:custom)[:.]([\w.]+)\}/g,
      (_, kind: string, key: string) => {
        const source = kind === 'param' ? { ...config.params?.default, ...params } : config.custom;
        return String(source?.[key] ?? '');
      },
    );
    const number = Number(resolved);
    if (resolved.trim() === '' || !Number.isFinite(number)) return fallback;
    return number;
  };
  const providerTimeout = resolve(config.provider.timeout, 6);

  return Object.entries(config.functions).map(([name, fn]): ServerlessFunction => {
    const dot = fn.handler.lastIndexOf('.');
    const httpRoutes: Route[] = [];
    const sqs: SqsEventSource[] = [];
    for (const event of fn.events ?? []) {
      if (event.httpApi !== undefined) httpRoutes.push(toRoute(event.httpApi));
      if (event.sqs !== undefined) {
        sqs.push({
          queueLogicalId: event.sqs.arn['Fn::GetAtt'][0],
          batchSize: resolve(event.sqs.batchSize, 10),
          maximumConcurrency: resolve(event.sqs.maximumConcurrency, 2),
        });
      }
    }
    return {
      name,
      module: `${fn.handler.slice(0, dot)}.ts`,
      exportName: fn.handler.slice(dot + 1),
      timeoutMs: resolve(fn.timeout, providerTimeout) * 1000,
      httpRoutes,
      sqs,
    };
  });
}

function toRoute(event: z.infer<typeof HttpApiEventSchema>): Route {
  if (typeof event === 'object') return { method: event.method, path: event.path };
  if (event === '*') return { method: 'ANY', path: '$default' };
  const [method = 'ANY', path = '$default'] = event.split(' ');
  return { method: method === '*' ? 'ANY' : method, path };
}
