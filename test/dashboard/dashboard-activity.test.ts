import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createDeliveryFeed, createOutcomeCounter } from '../../dashboard/activity.js';
import { createMetrics } from '../../lib/function-metrics.js';
import { tapMetrics, watchIngest } from '../../local/lambda/activity-taps.js';

describe('outcome counter', () => {
  it('counts per minute by outcome, oldest first, and forgets what is older than an hour', () => {
    const counter = createOutcomeCounter();
    const now = Date.parse('2025-05-14T10:30:30Z');
    counter.add('applied', 1, Date.parse('2025-05-14T09:20:00Z'));
    counter.add('applied', 2, now - 60_000);
    counter.add('late', 1, now);
    counter.add('refused', 3, now);
    const minutes = counter.perMinute(now);
    expect(minutes).toHaveLength(60);
    expect(minutes[0]!.minute).toBe('2025-05-14T09:31:00.000Z');
    expect(minutes.at(-2)).toEqual({
      minute: '2025-05-14T10:29:00.000Z',
      applied: 2,
      late: 0,
      duplicate: 0,
      parked: 0,
      refused: 0,
    });
    expect(minutes.at(-1)).toMatchObject({ minute: '2025-05-14T10:30:00.000Z', late: 1, refused: 3 });
    expect(minutes.reduce((sum, minute) => sum + minute.applied, 0)).toBe(2);
  });

  it('is fed by the metrics the functions emit, and the tap comes off', () => {
    const counter = createOutcomeCounter();
    const addMetric = Metrics.prototype.addMetric;
    const untap = tapMetrics(counter);
    // A seam of the functions' own, not a patch of Powertools' class.
    expect(Metrics.prototype.addMetric).toBe(addMetric);
    const metrics = createMetrics();
    metrics.addMetric('EventsLate', MetricUnit.Count, 1);
    metrics.addMetric('Parked', MetricUnit.Count, 1);
    metrics.addMetric('EnqueueLatency', MetricUnit.Milliseconds, 12);
    untap();
    metrics.addMetric('EventsLate', MetricUnit.Count, 1);
    expect(counter.perMinute().at(-1)).toMatchObject({ applied: 0, late: 1, parked: 1 });
  });
});

describe('delivery feed', () => {
  const request = (eventId: string) =>
    ({
      headers: { 'x-superoffice-event': 'contact.created', 'x-superoffice-eventid': eventId },
      requestContext: { timeEpoch: Date.parse('2025-05-14T10:00:00Z') },
    }) as unknown as APIGatewayProxyEventV2;

  it('records each answer of the ingest: accepted with its queue, parked and refused with their reason', async () => {
    const feed = createDeliveryFeed(2);
    const answers = [
      { statusCode: 200, body: '{"status":"accepted","eventId":"a","queue":"contact"}' },
      { statusCode: 200, body: '{"status":"parked","eventId":"b","reason":"unknown-event"}' },
      { statusCode: 401, body: '{"type":"urn:crm-webhook-receiver:problem:bad-signature","status":401}' },
    ];
    const ingest = watchIngest(async () => answers.shift(), feed);
    for (const id of ['a', 'b', 'c']) await ingest(request(id), {} as Context);
    // The oldest fell out of the feed of 2.
    expect(feed.after(0)).toEqual([
      {
        seq: 2,
        receivedAt: '2025-05-14T10:00:00.000Z',
        event: 'contact.created',
        eventId: 'b',
        status: 200,
        answer: 'parked',
        reason: 'unknown-event',
      },
      expect.objectContaining({
        seq: 3,
        eventId: 'c',
        status: 401,
        answer: 'refused',
        reason: 'bad-signature',
      }),
    ]);
    expect(feed.after(2)).toHaveLength(1);
  });
});
