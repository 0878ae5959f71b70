import { setTimeout as sleep } from 'node:timers/promises';
import { BaseProvider } from '@aws-lambda-powertools/parameters/base';
import { type AwsJsonEndpointConfig, awsErrorType, awsJsonCall } from '../aws/json-call.js';
import { type Backoff, fullJitterMs } from '../backoff.js';

/** `endpoint`: the entry point passes AWS_ENDPOINT_URL_SSM when set. */
export interface SsmParameterProviderConfig extends AwsJsonEndpointConfig {
  /**
   * How long one read may take, retries included (default 500 ms: the ingest's 3 s answer budget less the
   * 2.5 s it keeps for SQS). A throttled or failed attempt is tried again after a random wait while time is left.
   */
  budgetMs?: number;
  /** A number in [0, 1) for the waits' jitter; Math.random by default. */
  random?: () => number;
}

/** The waits between attempts (full jitter, so cold starts throttled together do not come back together). */
export const SSM_BACKOFF: Backoff = { baseMs: 25, capMs: 200 };
/** An attempt needs at least this long to be worth starting. */
const MIN_ATTEMPT_MS = 50;

/** SSM answered with an error; carries the SSM error type, never the parameter's value. */
export class ParameterReadError extends Error {
  /** Whether another attempt may answer differently (a throttle, a server error, no answer). */
  readonly retryable: boolean;

  constructor(
    message: string,
    readonly parameter: string,
    options?: { cause?: unknown; retryable?: boolean },
  ) {
    super(message, options);
    this.name = 'ParameterReadError';
    this.retryable = options?.retryable ?? false;
  }
}

interface Transport {
  getParameter(name: string): Promise<string | undefined>;
}

/**
 * Reads SecureString parameters (decrypted) with Powertools Parameters' caching, through one SigV4-signed
 * `GetParameter` call instead of the SSM client: the ingest needs that single operation, and the full
 * client would add about 77 KB (a quarter of the bundle) to every cold start. A burst of cold starts can
 * exceed Parameter Store's throughput: a throttled, failed or unanswered read is tried again with jittered
 * waits until `budgetMs` is spent (docs/capacity.md, "Secrets at scale-out").
 *
 * @example
 * const provider = new SsmParameterProvider({ region: 'eu-west-1' });
 * const json = await provider.get('/crm-webhook-receiver/prod/webhook-secrets', { maxAge: 300 });
 */
export class SsmParameterProvider extends BaseProvider {
  constructor(config: SsmParameterProviderConfig) {
    super({ awsSdkV3Client: createTransport(config) });
  }

  protected async _get(name: string): Promise<string | undefined> {
    return (this.client as Transport).getParameter(name);
  }

  protected async _getMultiple(): Promise<Record<string, unknown> | undefined> {
    throw new Error('SsmParameterProvider reads single parameters only');
  }
}

function createTransport(config: SsmParameterProviderConfig): Transport {
  const call = awsJsonCall({ ...config, service: 'ssm', contentType: 'application/x-amz-json-1.1' });
  const budgetMs = config.budgetMs ?? 500;
  const random = config.random ?? Math.random;

  async function attempt(name: string, timeoutMs: number): Promise<string | undefined> {
    const send = await call('AmazonSSM.GetParameter', { Name: name, WithDecryption: true });
    let response: Response;
    let text: string;
    try {
      response = await send(timeoutMs);
      text = await response.text();
    } catch (cause) {
      const reason =
        (cause as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : 'no answer';
      throw new ParameterReadError(`GetParameter ${name} failed: ${reason}`, name, {
        cause,
        retryable: true,
      });
    }
    if (!response.ok) {
      const type = awsErrorType(text) ?? `HTTP ${response.status}`;
      const retryable = response.status >= 500 || /Throttling/.test(type);
      throw new ParameterReadError(`GetParameter ${name} failed: ${type}`, name, { retryable });
    }
    const parsed = JSON.parse(text) as { Parameter?: { Value?: string } };
    return parsed.Parameter?.Value;
  }

  return {
    async getParameter(name) {
      const deadline = performance.now() + budgetMs;
      for (let attempts = 1; ; attempts++) {
        try {
          return await attempt(name, Math.max(1, Math.round(deadline - performance.now())));
        } catch (error) {
          const wait = fullJitterMs(attempts, SSM_BACKOFF, random);
          if (!(error instanceof ParameterReadError) || !error.retryable) throw error;
          if (deadline - performance.now() - wait < MIN_ATTEMPT_MS) {
            throw new ParameterReadError(
              `${error.message} (${attempts} attempt${attempts === 1 ? '' : 's'} within ${budgetMs} ms)`,
              name,
              { cause: error },
            );
          }
          await sleep(wait);
        }
      }
    },
  };
}
