import { describe, expect, it } from 'vitest';
import { decodeTyped, encodeTyped, plainTag, typedTagOf } from '../../lib/crm/typed-values.js';

describe('a custom table’s typed FieldValues, as the CRM writes them', () => {
  it.each([
    [6, 'I', '[I:6]'],
    ['6', 'I', '[I:6]'],
    [1.5, 'F', '[F:1.5]'],
    [130, 'F', '[F:130]'],
    [true, 'B', '[B:True]'],
    ['False', 'B', '[B:False]'],
    [0, 'B', '[B:False]'],
    ['2025-09-16T10:11:12', 'DT', '[DT:09/16/2025 10:11:12]'],
    ['2025-09-16T10:11:12.1234567', 'DT', '[DT:09/16/2025 10:11:12]'],
    ['09/16/2025 10:11:12', 'DT', '[DT:09/16/2025 10:11:12]'],
    ['Drill [18V]', 'S', '[S:Drill [18V]]'],
    [42, 'S', '[S:42]'],
  ] as const)('%j with tag %s is %s, and decodes back to its value', (value, tag, text) => {
    expect(encodeTyped(value, tag)).toBe(text);
    expect(typedTagOf(text)).toBe(tag);
    expect(encodeTyped(decodeTyped(text), tag)).toBe(text);
  });

  it('by the value’s own type (the simulator’s fallback), the form follows the value: integer I, other number F, boolean B, ISO time DT, text S', () => {
    expect(
      [6, 1.5, false, '2025-09-16T10:11:12', 'x'].map((value) => encodeTyped(value, plainTag(value))),
    ).toEqual(['[I:6]', '[F:1.5]', '[B:False]', '[DT:09/16/2025 10:11:12]', '[S:x]']);
  });

  it('decodes the samples’ forms to plain values, and leaves anything untyped as it is', () => {
    expect(decodeTyped('[I:1234]')).toBe(1234);
    expect(decodeTyped('[F:129.9]')).toBe(129.9);
    expect(decodeTyped('[B:True]')).toBe(true);
    // As encodeTyped reads a boolean's text: in any case.
    expect([decodeTyped('[B:true]'), decodeTyped('[B:TRUE]'), decodeTyped('[B:False]')]).toEqual([
      true,
      true,
      false,
    ]);
    expect(decodeTyped('[DT:09/16/2025 10:11:12]')).toBe('2025-09-16T10:11:12');
    expect(decodeTyped('[S:Drill 18V]')).toBe('Drill 18V');
    expect(decodeTyped('Drill')).toBe('Drill');
    expect(decodeTyped(3)).toBe(3);
    expect(typedTagOf('[X:1]')).toBeUndefined();
    expect(typedTagOf(1)).toBeUndefined();
  });

  it.each([
    ['abc', 'I'],
    [1.5, 'I'],
    ['', 'F'],
    [true, 'F'],
    ['maybe', 'B'],
    ['constructor', 'B'],
    ['yesterday', 'DT'],
    // Number() reads these as numbers, but they are texts, not a number the CRM answered.
    ['0x10', 'I'],
    ['0b11', 'F'],
    [' 5 ', 'I'],
    ['5\n', 'F'],
    // Past 2^53 a whole number's digits are not kept: written, it would be another number.
    ['12345678901234567890', 'I'],
    [1e21, 'I'],
  ] as const)('cannot write %j as %s (undefined: the caller says so)', (value, tag) => {
    expect(encodeTyped(value, tag)).toBeUndefined();
  });
});
