import { afterEach, describe, expect, it } from 'vitest';
import { buildSampleBody, signBody } from '../../tools/samples.js';
import { createRealisticSender } from '../../tools/sender.js';
import { type StatusTarget, statusTarget } from '../support/bus.js';

let target: StatusTarget | undefined;
afterEach(() => target?.close());

/** A receiver answering with `statuses` in turn (the last one from then on), recording requests. */
async function receiver(statuses: number[]) {
  target = await statusTarget(...statuses);
  return { url: target.url, seen: target.received };
}

const body = () => JSON.stringify(buildSampleBody('contact.changed'));

describe('the realistic sender', () => {
  it('signs the exact bytes, retries up to 3 times with the Retry header, and counts only 200', async () => {
    const { url, seen } = await receiver([503, 202, 200]);
    const sender = createRealisticSender({ url, secret: 's', retryDelaysMs: [10, 20] });
    const sent = body();
    expect(await sender.deliver(sent)).toBe('accepted');
    sender.close();
    expect(seen.map((request) => request.headers['x-superoffice-retry'])).toEqual([undefined, '1', '2']);
    expect(seen.every((request) => request.body === sent)).toBe(true);
    expect(seen[0]?.headers['x-superoffice-signature']).toBe(signBody(sent, 's'));
    expect(sender.stats).toMatchObject({ sent: 1, accepted: 1, retried: 2, discarded: 0 });
  });

  it('discards after the third failure and stops the webhook after 9 consecutive failures', async () => {
    const { url, seen } = await receiver([500]);
    const sender = createRealisticSender({ url, retryDelaysMs: [1, 1] });
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await sender.deliver(body()));
    sender.close();
    expect(outcomes).toEqual(['discarded', 'discarded', 'discarded', 'not-sent']);
    expect(seen).toHaveLength(9);
    expect(sender.stats).toMatchObject({ discarded: 3, notSent: 1, stoppedBy: 'too-many-errors' });
  });

  it('stops at once on 410 Gone', async () => {
    const { url, seen } = await receiver([410]);
    const sender = createRealisticSender({ url, retryDelaysMs: [1, 1] });
    expect(await sender.deliver(body())).toBe('discarded');
    expect(await sender.deliver(body())).toBe('not-sent');
    sender.close();
    expect(seen).toHaveLength(1);
    expect(sender.stats.stoppedBy).toBe('gone');
  });
});
