import type { Context } from 'aws-lambda';

/**
 * The invocation's stop signal: the local runtime's contexts carry one, aborted when it stops
 * (local/lambda/lambda-context.ts); Lambda's carry none. The CRM client aborts its calls and waits with it.
 */
export function abortSignalOf(context: Context | undefined): AbortSignal | undefined {
  const signal = (context as { abortSignal?: unknown } | undefined)?.abortSignal;
  return signal instanceof AbortSignal ? signal : undefined;
}
