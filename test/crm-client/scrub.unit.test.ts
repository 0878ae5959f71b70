import { describe, expect, it } from 'vitest';
import { MAX_CRM_TEXT_CHARS, scrubText } from '../../lib/crm/scrub.js';

describe('the CRM’s text, scrubbed', () => {
  it('keeps what names the call and the reason: paths, context ids, words', () => {
    const text =
      'GET /Cust12345/api/v1/archive/dynamic answered HTTP 500: PartnerSystemUserAuthenticate failed';
    expect(scrubText(text)).toBe(text);
  });

  it('removes a token after its scheme, JWTs, tickets, PEM blocks and long base64 or hex runs, whoever’s', () => {
    const text = [
      'Authorization: Basic Y3JtOmNybQ==',
      '"SOTicket 7T:dgBjAGYAZgBm"',
      'Bearer abc.def-123',
      'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln',
      '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----',
      '0123456789abcdef0123456789abcdef',
    ].join(' ');
    expect(scrubText(text)).toBe(
      'Authorization: Basic [redacted] "SOTicket [redacted]" Bearer [redacted] [redacted] [redacted] [redacted]',
    );
  });

  it('removes known values in their plain, JSON-escaped and base64 forms, and a key’s lines', () => {
    const key = '-----BEGIN RSA KEY-----\nAAAABBBBCCCCDDDDEEEE\n-----END RSA KEY-----';
    const text = `pw=hunter22 ${Buffer.from('hunter22').toString('base64')} ${JSON.stringify(key)} AAAABBBBCCCCDDDDEEEE`;
    const scrubbed = scrubText(text, ['hunter22', key]);
    expect(scrubbed).not.toMatch(/hunter22|aHVudGVyMjI|AAAABBBB/);
  });

  it('is one line of at most MAX_CRM_TEXT_CHARS', () => {
    const scrubbed = scrubText(`line one\n\tline two ${'word '.repeat(200)}`);
    expect(scrubbed).toHaveLength(MAX_CRM_TEXT_CHARS);
    expect(scrubbed).toMatch(/^line one line two word .*…$/);
  });

  it('reads at most a bounded prefix of a huge answer: a megabytes-long ErrorMessage costs milliseconds', () => {
    const started = performance.now();
    const scrubbed = scrubText(`${'x '.repeat(2_000_000)}secret-value-1`, ['secret-value-1']);
    expect(performance.now() - started).toBeLessThan(500);
    expect(scrubbed).toHaveLength(MAX_CRM_TEXT_CHARS);
  });

  it('drops a known value the 8 KB read cuts in two, even when blanks before it fold away', () => {
    const secret = 'Ab/cdEfgh+ijk9LmnOp/qrsTuv+wxyz12/34AB';
    const scrubbed = scrubText(`refused:${' '.repeat(8192 - 20)}${secret}`, [secret]);
    expect(scrubbed).toBe('refused:');
  });
});
