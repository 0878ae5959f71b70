import { fromEnv } from '@aws-sdk/credential-provider-env';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';

export type AwsCredentials = () => Promise<{
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}>;

/** Where and as whom an adapter over {@link awsJsonCall} calls its service: what its config takes. */
export interface AwsJsonEndpointConfig {
  region: string;
  /** Defaults to the regional endpoint (`https://<service>.<region>.amazonaws.com/`). */
  endpoint?: string | undefined;
  /** Defaults to the Lambda environment's credentials. */
  credentials?: AwsCredentials | undefined;
  fetch?: typeof fetch;
}

export interface AwsJsonCallConfig extends AwsJsonEndpointConfig {
  /** The signing name and the endpoint's prefix: `ssm`, `sqs`. */
  service: string;
  /** `application/x-amz-json-1.1` (SSM) or `-1.0` (SQS). */
  contentType: string;
}

/**
 * SigV4-signed calls of an AWS JSON protocol operation (`X-Amz-Target`), through fetch: for the
 * one or two operations a function needs of a service whose SDK client would weigh tens of KB in its
 * bundle (lib/secrets/ssm.ts, the reconcile queue's SendMessage). Signing (which reads the
 * credentials) comes first and throws as it is; the call it returns sends, and the caller reads the answer.
 *
 * @example
 * const call = awsJsonCall({ service: 'sqs', region, contentType: 'application/x-amz-json-1.0' });
 * const send = await call('AmazonSQS.SendMessage', { QueueUrl, MessageBody });
 * const response = await send(5000);
 */
export function awsJsonCall(config: AwsJsonCallConfig) {
  const endpoint = new URL(config.endpoint ?? `https://${config.service}.${config.region}.amazonaws.com/`);
  const signer = new SignatureV4({
    service: config.service,
    region: config.region,
    sha256: Sha256,
    credentials: config.credentials ?? fromEnv(),
  });
  const send = config.fetch ?? fetch;
  return async (target: string, payload: unknown): Promise<(timeoutMs: number) => Promise<Response>> => {
    const body = JSON.stringify(payload);
    const signed = await signer.sign({
      method: 'POST',
      protocol: endpoint.protocol,
      hostname: endpoint.hostname,
      ...(endpoint.port !== '' && { port: Number(endpoint.port) }),
      path: endpoint.pathname,
      query: {},
      headers: { host: endpoint.host, 'content-type': config.contentType, 'x-amz-target': target },
      body,
    });
    return (timeoutMs) =>
      send(endpoint, {
        method: 'POST',
        headers: signed.headers,
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
  };
}

/** The error type of an AWS JSON error answer (`__type`, its last `#` part), if it has one. */
export function awsErrorType(text: string): string | undefined {
  try {
    const type = (JSON.parse(text) as { __type?: unknown }).__type;
    return typeof type === 'string' ? type.split('#').pop() : undefined;
  } catch {
    return undefined;
  }
}
