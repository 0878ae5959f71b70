import { describe, expect, it } from 'vitest';
import { accessLogLine } from '../../scripts/cost/log-lines.js';

describe('scripts/cost: the access log line it prices', () => {
  it('fills in the format’s $context variables', () => {
    expect(accessLogLine('{"status":"$context.status"}', { '$context.status': '200' })).toBe(
      '{"status":"200"}',
    );
  });

  it('names the file and function to give a sample value to, for a variable the format gained', () => {
    expect(() => accessLogLine('{"x":"$context.domainName"}', {})).toThrow(
      'scripts/cost/log-lines.ts (accessLogValues) has no sample value for $context.domainName',
    );
  });
});
