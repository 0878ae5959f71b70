import { describe, expect, it, vi } from 'vitest';
import { type EventName, SPEC_EVENT_FAMILIES } from '../../lib/events/index.js';
import { hookName, runHook } from '../../lib/hooks.js';
import { apply } from '../../lib/projection.js';
import { rowEvent } from '../support/workers.js';

const info = { outcome: 'applied', messageId: 'm-1' } as const;

describe('hooks dispatch from the registry', () => {
  it('names, for every family, the hook the registry gives it', () => {
    for (const [event, family] of Object.entries(SPEC_EVENT_FAMILIES)) {
      expect(hookName(event as EventName)).toBe(family.hook);
    }
  });

  it('calls the hook of the event family, and only that one', async () => {
    const event = rowEvent('contact.changed', { primaryKey: 3 });
    const row = apply(undefined, event);
    const onContactChanged = vi.fn();
    const onContactCreated = vi.fn();

    await runHook({ onContactChanged, onContactCreated }, event, row, info);

    expect(onContactChanged).toHaveBeenCalledWith(event, row, info);
    expect(onContactCreated).not.toHaveBeenCalled();
  });

  it('fails loudly for an event no family knows, never falls back to a default', async () => {
    const event = { ...rowEvent('contact.changed'), Event: 'invoice.changed' };
    const onEntityEvent = vi.fn();
    await expect(
      runHook({ onEntityEvent }, event as never, apply(undefined, rowEvent('contact.created')), info),
    ).rejects.toThrow('no event family for "invoice.changed"');
    expect(onEntityEvent).not.toHaveBeenCalled();
  });
});
