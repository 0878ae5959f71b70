import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SubscriptionsError } from '../../lib/bus/errors.js';
import { DEFAULT_RETRY, loadSubscriptions, parseSubscriptions } from '../../lib/bus/subscriptions.js';

const ROOT = join(import.meta.dirname, '..', '..');
const url = 'https://example.com/hook';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'subscriptions-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The one-line message parseSubscriptions throws for `yaml`. */
function refusal(yaml: string, mode: 'aws' | 'local' = 'aws'): string {
  try {
    parseSubscriptions(yaml, 'subscriptions.yml', mode);
  } catch (error) {
    expect(error).toBeInstanceOf(SubscriptionsError);
    const { message } = error as Error;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('expected a refusal');
}

const one = (fields: string) => `- name: orders\n  pattern: { detail-type: [sale.sold] }\n${fields}`;

describe('loadSubscriptions', () => {
  it('reads the shipped example: three targets, retry defaults filled in, patterns compiled', () => {
    const subscriptions = loadSubscriptions({
      root: ROOT,
      mode: 'aws',
      env: { SUBSCRIPTIONS_FILE: 'subscriptions.example.yml' },
    });
    expect(subscriptions.map((s) => [s.name, s.target])).toEqual([
      ['department-changes', { kind: 'url', url: 'https://example.com/crm/department' }],
      ['sales-sold', { kind: 'queue', queue: 'sales-sold' }],
      [
        'contacts-deleted',
        { kind: 'lambda', lambda: 'arn:aws:lambda:eu-west-1:123456789012:function:contact-cleanup' },
      ],
    ]);
    expect(subscriptions[0]?.retry).toEqual({ attempts: 8, maxAgeSeconds: 3600 });
    expect(subscriptions[0]?.auth).toEqual({
      header: 'X-Api-Key',
      parameter: '/crm-webhook-receiver/prod/department-api-key',
      env: 'DEPARTMENT_API_KEY',
    });
    expect(subscriptions[1]?.retry).toEqual(DEFAULT_RETRY);
    const department = subscriptions[0]!;
    expect(
      department.matches({
        'detail-type': 'contact.changed',
        detail: { significantChanges: ['department'] },
      }),
    ).toBe(true);
    expect(
      department.matches({ 'detail-type': 'contact.changed', detail: { significantChanges: ['updated'] } }),
    ).toBe(false);
  });

  it('means no subscriptions when subscriptions.yml is missing, empty, or an empty list', () => {
    expect(loadSubscriptions({ root: dir, mode: 'aws', env: {} })).toEqual([]);
    writeFileSync(join(dir, 'subscriptions.yml'), '# nothing yet\n');
    expect(loadSubscriptions({ root: dir, mode: 'aws', env: {} })).toEqual([]);
    writeFileSync(join(dir, 'subscriptions.yml'), '[]\n');
    expect(loadSubscriptions({ root: dir, mode: 'aws', env: {} })).toEqual([]);
  });

  it('reads the file SUBSCRIPTIONS_FILE names, and refuses one that is missing', () => {
    writeFileSync(join(dir, 'other.yml'), one(`  target: { queue: orders }\n`));
    expect(
      loadSubscriptions({ root: dir, mode: 'aws', env: { SUBSCRIPTIONS_FILE: 'other.yml' } }),
    ).toHaveLength(1);
    expect(() =>
      loadSubscriptions({ root: dir, mode: 'aws', env: { SUBSCRIPTIONS_FILE: 'nope.yml' } }),
    ).toThrow('nope.yml: cannot be read');
  });
});

describe('parseSubscriptions refuses, in one line naming the subscription and the place', () => {
  it.each([
    ['not a list', 'name: x\n', 'expected a list of subscriptions'],
    [
      'a bad name',
      '- name: Orders\n  pattern: { a: [1] }\n  target: { queue: q }\n',
      'subscription "Orders": name: must be',
    ],
    [
      'no target',
      one('  target: {}\n'),
      'subscription "orders": target: must have exactly one of url, queue, lambda',
    ],
    [
      'two targets',
      one(`  target: { url: ${url}, queue: orders }\n`),
      'subscription "orders": target: must have exactly one of url, queue, lambda',
    ],
    [
      'an unknown field',
      one('  target: { queue: q }\n  filter: x\n'),
      'subscription "orders": Unrecognized key',
    ],
    [
      'a URL that is not one',
      one('  target: { url: nowhere }\n'),
      'subscription "orders": target.url: must be an http(s) URL',
    ],
    [
      'a Lambda that is not an ARN',
      one('  target: { lambda: my-function }\n'),
      'subscription "orders": target.lambda: must be a Lambda function ARN',
    ],
    [
      'too many retries',
      one('  target: { queue: q }\n  retry: { attempts: 186 }\n'),
      'subscription "orders": retry.attempts: Too big',
    ],
    [
      'too short a maximum age',
      one('  target: { queue: q }\n  retry: { maxAgeSeconds: 59 }\n'),
      'subscription "orders": retry.maxAgeSeconds: Too small',
    ],
    [
      'a pattern the local matcher cannot evaluate',
      '- name: orders\n  pattern: { detail: { Changes: [{ sounds-like: dept }] } }\n  target: { queue: q }\n',
      'subscription "orders": pattern: invalid event pattern at detail.Changes[0]: unknown operator "sounds-like"',
    ],
    [
      'an empty pattern',
      '- name: orders\n  pattern: {}\n  target: { queue: q }\n',
      'subscription "orders": pattern: invalid event pattern at (root)',
    ],
    [
      'auth on a queue target',
      one('  target: { queue: q }\n  auth: { header: X-Key, parameter: /k, env: KEY }\n'),
      'subscription "orders": auth applies to url targets only',
    ],
    [
      'an auth env that is not a variable name',
      one(`  target: { url: ${url} }\n  auth: { header: X-Key, parameter: /k, env: my-key }\n`),
      'subscription "orders": auth.env: must be an environment variable name',
    ],
    [
      'http on AWS',
      one('  target: { url: "http://127.0.0.1:9000/hook" }\n'),
      'subscription "orders": target.url must be https',
    ],
    [
      'a repeated name',
      `${one('  target: { queue: a }\n')}${one('  target: { queue: b }\n')}`,
      'subscriptions "orders" and "orders" share the subscription name "orders"',
    ],
    [
      'names that make the same logical id',
      '- { name: a-1b, pattern: { a: [1] }, target: { queue: a } }\n- { name: a1b, pattern: { a: [1] }, target: { queue: b } }\n',
      'subscriptions "a-1b" and "a1b" share the logical id A1b',
    ],
    [
      'two subscriptions on one queue',
      '- { name: a, pattern: { a: [1] }, target: { queue: q } }\n- { name: b, pattern: { a: [1] }, target: { queue: q } }\n',
      'subscriptions "a" and "b" share the queue "q"',
    ],
    [
      'a number no double holds exactly (EventBridge refuses it)',
      '- name: orders\n  pattern: { detail: { n: [{ numeric: [">", 1E-325] }] } }\n  target: { queue: q }\n',
      'subscription "orders": pattern: invalid event pattern at detail.n[0].numeric[1]: 1E-325 is not exactly a double (it reads as 0): EventBridge refuses such a number',
    ],
    [
      'a long no double holds, anything-but',
      '- name: orders\n  pattern: { n: [{ anything-but: [1, 9007199254740993] }] }\n  target: { queue: q }\n',
      'invalid event pattern at n[0].anything-but[1]: 9007199254740993 is not exactly a double (it reads as 9007199254740992)',
    ],
    [
      'a literal no double holds (CloudFormation would get it rounded)',
      '- name: orders\n  pattern: { n: [0.30000000000000001] }\n  target: { queue: q }\n',
      'invalid event pattern at n[0]: 0.30000000000000001 is not exactly a double (it reads as 0.3)',
    ],
    ['YAML that does not parse', '- name: [', 'subscriptions.yml: not valid YAML'],
  ])('%s', (_, yaml, expected) => {
    expect(refusal(yaml)).toContain(expected);
  });

  it('accepts the numbers a double holds exactly, whatever their spelling', () => {
    const numbers = [
      '0.1',
      '3.018e2',
      '-0.0',
      '.5',
      '1e300',
      '1.7976931348623157e308',
      '9007199254740992',
      '0x1F',
      '-0o17',
    ];
    const yaml = numbers
      .map(
        (n, i) =>
          `- { name: n${i}, pattern: { n: [{ numeric: [">=", ${n}] }] }, target: { queue: q${i} } }\n`,
      )
      .join('');

    const bounds = parseSubscriptions(yaml, 'subscriptions.yml', 'aws').map(
      ({ pattern }) => (pattern.n as [{ numeric: [string, number] }])[0].numeric[1],
    );

    expect(bounds).toEqual([0.1, 301.8, -0, 0.5, 1e300, 1.7976931348623157e308, 9007199254740992, 31, -15]);
  });

  it('accepts http only on 127.0.0.1 or localhost, and only locally', () => {
    for (const host of ['127.0.0.1:9000', 'localhost']) {
      const [subscription] = parseSubscriptions(
        one(`  target: { url: "http://${host}/hook" }\n`),
        'subscriptions.yml',
        'local',
      );
      expect(subscription?.target).toEqual({ kind: 'url', url: `http://${host}/hook` });
    }
    expect(refusal(one('  target: { url: "http://example.com/hook" }\n'), 'local')).toContain(
      'target.url must be https',
    );
  });
});
