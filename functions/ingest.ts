import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { optionalEnv, requireEnv } from '../lib/config/env.js';
import { parseSecretsJson, readIngestConfig, secretConfig } from '../lib/config/ingest.js';
import { isProxyEventV2, toDeliveryRequest, toProxyResult } from '../lib/ingest/apigateway.js';
import {
  type DeliveryPolicy,
  type DeliveryResponse,
  deliveryPolicy,
  handleDelivery,
  problemAnswer,
  unavailableAnswer,
} from '../lib/ingest/index.js';
import { createSignatureVerifier } from '../lib/ingest/signature.js';
import { METRIC, METRICS_NAMESPACE } from '../lib/metrics.js';
import { boundedSqsClientConfig, createSqsSender } from '../lib/queue/sqs.js';
import { SsmParameterProvider } from '../lib/secrets/ssm.js';

const config = readIngestConfig();
// Service name and log level come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_LOG_LEVEL, as in every function.
const logger = new Logger();
const metrics = new Metrics({ namespace: METRICS_NAMESPACE });
// The answer budget: SendMessage gives up within ENQUEUE_TIMEOUT_MS (2.5 s), so the 503 reaches the
// sender within 3 s, before its own retry is due.
const queue = createSqsSender({
  client: new SQSClient(boundedSqsClientConfig(config.enqueueTimeoutMs)),
  queueUrls: config.queueUrls,
  deadlineMs: config.enqueueTimeoutMs,
});

let policy: DeliveryPolicy = deliveryPolicy(config);
let parameterValue: string | undefined;
// A throttled read is tried again for up to 500 ms (the provider's budget), inside the 3 s answer budget.
const parameters =
  config.secretsParameter === undefined
    ? undefined
    : new SsmParameterProvider({
        region: requireEnv('AWS_REGION'),
        endpoint: optionalEnv('AWS_ENDPOINT_URL_SSM'),
      });

/** With WEBHOOK_SECRETS_PARAMETER, secrets come from SSM (cached 5 minutes); rebuilt only when they change. */
async function currentPolicy(): Promise<DeliveryPolicy> {
  if (parameters === undefined || config.secretsParameter === undefined) return policy;
  const value = (await parameters.get(config.secretsParameter, { maxAge: 300 })) as string | undefined;
  if (value !== undefined && value !== parameterValue) {
    const byContext = parseSecretsJson(value, 'WEBHOOK_SECRETS_PARAMETER');
    policy = deliveryPolicy(
      config,
      createSignatureVerifier(secretConfig(config.secrets.fallback.slice(), byContext)),
    );
    parameterValue = value;
  }
  return policy;
}

export const handler = async (
  event: APIGatewayProxyEventV2,
  context?: Context,
): Promise<APIGatewayProxyStructuredResultV2> => {
  if (context !== undefined) logger.addContext(context);
  try {
    if (!isProxyEventV2(event)) {
      return toProxyResult(problemAnswer(400, 'bad-request', 'not an HTTP API request'));
    }
    const response = await handleDelivery(toDeliveryRequest(event), await currentPolicy(), queue);
    record(response);
    return toProxyResult(response);
  } catch (error) {
    logger.error('unexpected failure; answering 503 so the sender retries', { error });
    metrics.addMetric(METRIC.IngestErrors, MetricUnit.Count, 1);
    return toProxyResult(unavailableAnswer());
  } finally {
    logger.resetKeys();
    metrics.publishStoredMetrics();
  }
};

function record(response: DeliveryResponse): void {
  const { decision } = response;
  logger.appendKeys({
    EventId: decision.log.eventId,
    Event: decision.log.event,
    ContextIdentifier: decision.log.contextIdentifier,
    signatureVerified: decision.log.signatureVerified,
  });
  if (response.enqueueMs !== undefined) {
    metrics.addMetric(
      METRIC.EnqueueLatency,
      MetricUnit.Milliseconds,
      Math.round(response.enqueueMs * 10) / 10,
    );
  }
  if (response.status === 503) {
    logger.error('queue unavailable; answered 503', {
      queue: decision.kind === 'accept' || decision.kind === 'park' ? decision.message.queue : undefined,
      error: response.error,
    });
    metrics.addMetric(METRIC.EnqueueFailures, MetricUnit.Count, 1);
  } else if (response.status === 413) {
    logger.warn('rejected: the message does not fit the queue', {
      queue: decision.kind === 'accept' || decision.kind === 'park' ? decision.message.queue : undefined,
    });
    metrics.addMetric(METRIC.Rejected, MetricUnit.Count, 1);
  } else if (decision.kind === 'accept') {
    // Accepted deliveries are the bulk: counted by the Accepted metric, logged at DEBUG only (cost).
    logger.debug('accepted', { queue: decision.message.queue });
    metrics.addMetric(METRIC.Accepted, MetricUnit.Count, 1);
    // CRM versions older than FieldValues: applied all the same, counted to see who still sends them.
    if (decision.olderShape) metrics.addMetric(METRIC.OlderPayloadShape, MetricUnit.Count, 1);
  } else if (decision.kind === 'test') {
    // Once per webhook saved in the CRM: worth a line, and a metric to see registrations by.
    logger.info('registration test answered 200; nothing queued');
    metrics.addMetric(METRIC.RegistrationTests, MetricUnit.Count, 1);
  } else if (decision.kind === 'park') {
    logger.warn('parked', { reason: decision.reason, detail: decision.detail });
    metrics.addMetric(METRIC.Parked, MetricUnit.Count, 1);
  } else {
    logger.warn('rejected', { status: decision.status, reason: decision.reason, detail: decision.detail });
    metrics.addMetric(METRIC.Rejected, MetricUnit.Count, 1);
    metrics
      .singleMetric()
      .addDimension('reason', decision.reason)
      .addMetric(METRIC.RejectedByReason, MetricUnit.Count, 1);
  }
}
