import { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { optionalEnv, requireEnv } from '../lib/config/env.js';
import { readIngestConfig } from '../lib/config/ingest.js';
import { createMetrics } from '../lib/function-metrics.js';
import { isProxyEventV2, toDeliveryRequest, toProxyResult } from '../lib/ingest/apigateway.js';
import { createPolicySource, handleDelivery, problemAnswer, unavailableAnswer } from '../lib/ingest/index.js';
import { recordOutcome } from '../lib/ingest/outcome.js';
import { METRIC } from '../lib/metrics.js';
import { boundedSqsClientConfig, createSqsSender } from '../lib/queue/sqs.js';
import { SsmParameterProvider } from '../lib/secrets/ssm.js';

const config = readIngestConfig();
// Service name and log level come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_LOG_LEVEL, as in every function.
const logger = new Logger();
const metrics = createMetrics();
// The answer budget: SendMessage gives up within ENQUEUE_TIMEOUT_MS (2.5 s), so the 503 reaches the
// sender within 3 s, before its own retry is due.
const queue = createSqsSender({
  client: new SQSClient(boundedSqsClientConfig(config.enqueueTimeoutMs)),
  queueUrls: config.queueUrls,
  deadlineMs: config.enqueueTimeoutMs,
});

// A throttled read is tried again for up to 500 ms (the provider's budget), inside the 3 s answer budget.
const currentPolicy = createPolicySource(
  config,
  config.secretsParameter === undefined
    ? undefined
    : new SsmParameterProvider({
        region: requireEnv('AWS_REGION'),
        endpoint: optionalEnv('AWS_ENDPOINT_URL_SSM'),
      }),
  (error) =>
    logger.warn('secrets parameter not refreshed; verifying with the secrets read before', {
      reason: error instanceof Error ? error.message : String(error),
    }),
);

export const handler = async (
  event: APIGatewayProxyEventV2,
  lambdaContext?: Context,
): Promise<APIGatewayProxyStructuredResultV2> => {
  if (lambdaContext !== undefined) logger.addContext(lambdaContext);
  try {
    if (!isProxyEventV2(event)) {
      return toProxyResult(problemAnswer(400, 'bad-request', 'not an HTTP API request'));
    }
    const response = await handleDelivery(toDeliveryRequest(event), await currentPolicy(), queue);
    recordOutcome(response, { logger, metrics });
    return toProxyResult(response);
  } catch (error) {
    logger.error('unexpected failure; answering 503 so the sender retries', { error });
    metrics.addMetric(METRIC.IngestErrors, MetricUnit.Count, 1);
    return toProxyResult(unavailableAnswer());
  } finally {
    logger.resetKeys();
    // Only when there are (see lib/workers/handler.ts): overlapping local invocations share the buffer.
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  }
};
