import { describe, expect, it } from 'vitest';
import { reconcileQueueFromEnv } from '../../functions/reconcile-queue.js';
import { readWatchConfig } from '../../lib/config/watch.js';

describe('the watch configuration', () => {
  it('polls every 300 s, re-activates TooManyErrors only, matches no target URL and schedules no full pass by default', () => {
    expect(readWatchConfig({})).toEqual({
      pollSeconds: 300,
      reactivate: 'too-many-errors',
      receiverUrl: undefined,
      fullHours: 0,
      pollMaxInFlight: 64,
    });
    expect(
      readWatchConfig({
        RECONCILE_POLL_SECONDS: '10',
        REACTIVATE_WEBHOOKS: 'stopped-too',
        RECEIVER_URL: 'https://x.example/webhook',
        RECONCILE_FULL_HOURS: '24',
        RECONCILE_POLL_MAX_IN_FLIGHT: '8',
      }),
    ).toEqual({
      pollSeconds: 10,
      reactivate: 'stopped-too',
      receiverUrl: 'https://x.example/webhook',
      fullHours: 24,
      pollMaxInFlight: 8,
    });
    for (const [value, hours] of [
      ['', 0],
      ['0', 0],
      ['1', 1],
      [' 8760 ', 8760],
    ] as const)
      expect(readWatchConfig({ RECONCILE_FULL_HOURS: value }).fullHours).toBe(hours);
    expect(readWatchConfig({ REACTIVATE_WEBHOOKS: 'false' }).reactivate).toBe('off');
    expect(readWatchConfig({ REACTIVATE_WEBHOOKS: 'TRUE' }).reactivate).toBe('too-many-errors');
  });

  it('refuses a wrong value with one line naming the variable and what it accepts', () => {
    for (const value of ['9', '0', '-5', '30.5', 'soon', '1e3']) {
      expect(() => readWatchConfig({ RECONCILE_POLL_SECONDS: value })).toThrow(
        /^RECONCILE_POLL_SECONDS must be a whole number of seconds, at least 10 \(default 300\)$/,
      );
    }
    expect(() => readWatchConfig({ REACTIVATE_WEBHOOKS: 'stopped' })).toThrow(
      /^REACTIVATE_WEBHOOKS must be true .*, false, or stopped-too .*$/,
    );
    for (const value of ['8761', '-1', '1.5', '24h', 'daily', '1e3'])
      expect(() => readWatchConfig({ RECONCILE_FULL_HOURS: value })).toThrow(
        /^RECONCILE_FULL_HOURS must be a whole number of hours from 1 to 8760 .*, or 0 \(the default: none\)$/,
      );
    for (const value of ['0', '513', '2.5', 'many'])
      expect(() => readWatchConfig({ RECONCILE_POLL_MAX_IN_FLIGHT: value })).toThrow(
        /^RECONCILE_POLL_MAX_IN_FLIGHT must be a whole number from 1 to 512: .* \(default 64\)$/,
      );
    expect(() => readWatchConfig({ RECEIVER_URL: 'ftp://x' })).toThrow(
      /^RECEIVER_URL must be the http\(s\) URL/,
    );
  });
});

describe('the reconcile queue of the webhook-state worker', () => {
  it('is off without CRM_API_URL, and needs RECONCILE_QUEUE_URL with it', () => {
    expect(
      reconcileQueueFromEnv({ RECONCILE_QUEUE_URL: 'https://sqs.x/1/r.fifo', AWS_REGION: 'eu-west-1' }),
    ).toBeUndefined();
    const api = {
      CRM_API_URL: 'https://online.superoffice.com/{ContextIdentifier}/api/v1',
      AWS_REGION: 'eu-west-1',
    };
    expect(() => reconcileQueueFromEnv(api)).toThrow(/^RECONCILE_QUEUE_URL must be set$/);
    expect(reconcileQueueFromEnv({ ...api, RECONCILE_QUEUE_URL: 'https://sqs.x/1/r.fifo' })).toHaveProperty(
      'enqueue',
    );
  });
});
