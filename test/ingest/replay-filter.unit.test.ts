import { describe, expect, it } from 'vitest';
import { PatternError } from '../../lib/bus/pattern/errors.js';
import { replayEventMatcher } from '../../lib/ingest/index.js';

/** The replay's `event=` filter: the subscriptions' wildcard matcher, not a regular expression. */
describe('replayEventMatcher', () => {
  it('matches as an EventBridge wildcard: * any run of characters, everything else literal', () => {
    const person = replayEventMatcher('person.*');
    expect(['person.created', 'person.', 'sale.created', 'personXcreated'].map(person)).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(replayEventMatcher('*.deleted')('list.category.deleted')).toBe(true);
    expect(replayEventMatcher('sale.(created|sold)')('sale.created')).toBe(false);
    expect(replayEventMatcher('y_\\*')('y_*')).toBe(true);
    for (const everything of [undefined, '', '*'])
      expect(replayEventMatcher(everything)('anything')).toBe(true);
  });

  it('answers a pattern that makes a regular expression backtrack at once (the regex took 23 s on 200 characters)', () => {
    const event = 'a'.repeat(400);
    expect(replayEventMatcher('*a*a*a*a*b')(event)).toBe(false);
    expect(replayEventMatcher('*a*a*a*a*a')(event)).toBe(true);
  });

  it('refuses what the wildcard matcher refuses, naming the filter', () => {
    expect(() => replayEventMatcher('person.**')).toThrow(PatternError);
    expect(() => replayEventMatcher('person.**')).toThrow(
      'invalid event pattern at event: consecutive * are not allowed in a wildcard',
    );
  });
});
