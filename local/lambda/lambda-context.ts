import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

export interface LambdaContextOptions {
  functionName: string;
  timeoutMs: number;
  memoryLimitInMB?: number;
  region?: string;
  accountId?: string;
  /** Aborted when the runtime stops: carried as the context's `abortSignal` (functions/abort-signal.ts). */
  signal?: AbortSignal;
}

/**
 * A Lambda invocation context as the runtime builds it, with a deadline `timeoutMs` from now, and the
 * runtime's stop signal as `abortSignal` (Lambda's own contexts have none: it freezes or ends the
 * process instead), so Ctrl-C does not wait for a call to a CRM that is gone.
 */
export function createLambdaContext(options: LambdaContextOptions): Context & { abortSignal?: AbortSignal } {
  const deadline = Date.now() + options.timeoutMs;
  const region = options.region ?? 'us-east-1';
  const accountId = options.accountId ?? '123456789012';
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: options.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:${accountId}:function:${options.functionName}`,
    memoryLimitInMB: String(options.memoryLimitInMB ?? 1024),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${options.functionName}`,
    logStreamName: `local/[$LATEST]${randomUUID().replaceAll('-', '')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
    ...(options.signal && { abortSignal: options.signal }),
  };
}
