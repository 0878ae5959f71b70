// Most rows come from the examples in AWS's EventBridge user guide: "Comparison operators for use in
// event patterns" (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-operators.html)
// and the pages it links (arrays, null values and empty strings, content filtering), plus the
// examples in the README of aws/event-ruler, the library EventBridge's matching is built on.
import { describe, expect, it } from 'vitest';
import {
  compilePattern,
  InexactNumber,
  isExactDouble,
  MAX_PATTERN_DEPTH,
  PatternError,
} from '../../lib/bus/pattern/index.js';

interface Row {
  name: string;
  pattern: Record<string, unknown>;
  event: unknown;
  matches: boolean;
}

/** The sample event of the content-filtering examples (event-ruler's README). */
const ec2 = {
  version: '0',
  id: 'ddddd4-aaaa-7777-4444-345dd43cc333',
  'detail-type': 'EC2 Instance State-change Notification',
  source: 'aws.ec2',
  account: '012345679012',
  time: '2017-10-02T16:24:49Z',
  region: 'us-east-1',
  resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-000000aaaaaa00000'],
  detail: {
    'c-count': 5,
    'd-count': 3,
    'x-limit': 301.8,
    'source-ip': '10.0.0.33',
    'instance-id': 'i-000000aaaaaa00000',
    state: 'running',
  },
};
const withDetail = (detail: Record<string, unknown>) => ({ ...ec2, detail: { ...ec2.detail, ...detail } });
const employees = {
  employees: [
    [
      { firstName: 'John', lastName: 'Doe' },
      { firstName: 'Anna', lastName: 'Smith' },
    ],
    [{ firstName: 'Peter', lastName: 'Jones' }],
  ],
};

const rows = (name: string, pattern: Record<string, unknown>, cases: [unknown, boolean][]): Row[] =>
  cases.map(([event, matches], i) => ({ name: `${name} #${i + 1}`, pattern, event, matches }));

const table: Row[] = [
  // Exact values, AND across fields, OR within a field's array.
  ...rows(
    'exact values',
    {
      'detail-type': ['EC2 Instance State-change Notification'],
      resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-000000aaaaaa00000'],
      detail: { state: ['initializing', 'running'] },
    },
    [
      [ec2, true],
      [withDetail({ state: 'initializing' }), true],
      [withDetail({ state: 'stopped' }), false],
      [{ ...ec2, 'detail-type': 'Other' }, false],
      [{ ...ec2, detail: undefined }, false],
    ],
  ),
  ...rows('a string is not the number it spells', { n: ['5'] }, [
    [{ n: '5' }, true],
    [{ n: 5 }, false],
  ]),
  ...rows('numbers compare as numbers', { n: [300] }, [
    [JSON.parse('{"n": 3.0e2}'), true],
    [{ n: 300.5 }, false],
    [{ n: '300' }, false],
  ]),
  ...rows('booleans', { ok: [true] }, [
    [{ ok: true }, true],
    [{ ok: false }, false],
    [{ ok: 'true' }, false],
  ]),
  ...rows('null', { detail: { responseElements: [null] } }, [
    [{ detail: { responseElements: null } }, true],
    [{ detail: { responseElements: '' } }, false],
    [{ detail: {} }, false],
  ]),
  ...rows('empty string', { detail: { eventVersion: [''] } }, [
    [{ detail: { eventVersion: '' } }, true],
    [{ detail: { eventVersion: null } }, false],
  ]),
  ...rows('a literal does not match an object', { detail: ['running'] }, [[ec2, false]]),
  ...rows('a missing field does not match a value', { detail: { missing: ['x'] } }, [[ec2, false]]),
  ...rows('a non-object event matches no field', { source: ['aws.ec2'] }, [
    ['aws.ec2', false],
    [null, false],
  ]),
  ...rows('inherited properties are not fields', { toString: [{ exists: true }] }, [[{}, false]]),

  // Arrays in the event: any element (intersection); nested arrays are flattened.
  ...rows(
    'arrays intersect',
    {
      resources: [
        'arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f',
        'arn:aws:ec2:us-east-1:111122223333:instance/i-b188560f',
        'arn:aws:ec2:us-east-1:444455556666:instance/i-b188560f',
      ],
    },
    [
      [
        {
          resources: [
            'arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:eb56d16b-bbf0-401d-b893-d5978ed4a025:autoScalingGroupName/ASGTerminate',
            'arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f',
          ],
        },
        true,
      ],
      [{ resources: ['arn:aws:ec2:us-east-1:999999999999:instance/i-b188560f'] }, false],
      [{ resources: [] }, false],
    ],
  ),
  ...rows('an empty event array is not null', { resources: [null] }, [
    [{ resources: [] }, false],
    [{ resources: [null] }, true],
  ]),
  ...rows('nested arrays flatten', { a: [2] }, [
    [{ a: [[1], [2, [3]]] }, true],
    [{ a: [[1], [3]] }, false],
  ]),
  ...rows('objects in arrays', { employees: { firstName: ['Anna'] } }, [
    [employees, true],
    [{ employees: [{ firstName: 'Bob' }] }, false],
  ]),
  ...rows(
    'fields of different array elements do not combine',
    { employees: { firstName: ['Anna'], lastName: ['Jones'] } },
    [[employees, false]],
  ),
  ...rows(
    'fields of one array element combine',
    { employees: { firstName: ['Anna'], lastName: ['Smith'] } },
    [[employees, true]],
  ),
  ...rows('nesting', { detail: { a: { b: { c: ['deep'] } } } }, [
    [{ detail: { a: { b: { c: 'deep' } } } }, true],
    [{ detail: { a: { b: { c: 'shallow' } } } }, false],
    [{ detail: { a: 'deep' } }, false],
  ]),

  // prefix and suffix, with their equals-ignore-case variants.
  ...rows('prefix', { time: [{ prefix: '2017-10-02' }] }, [
    [ec2, true],
    [{ time: '2017-10-03T18:43:48Z' }, false],
    [{ time: 20171002 }, false],
  ]),
  ...rows('prefix ignoring case', { service: [{ prefix: { 'equals-ignore-case': 'eventb' } }] }, [
    [{ service: 'EventBridge' }, true],
    [{ service: 'EVENTBUS' }, true],
    [{ service: 'Lambda' }, false],
  ]),
  ...rows('suffix', { FileName: [{ suffix: '.png' }] }, [
    [{ FileName: 'image.png' }, true],
    [{ FileName: 'image.PNG' }, false],
    [{ FileName: 'image.png.txt' }, false],
  ]),
  ...rows('suffix ignoring case', { service: [{ suffix: { 'equals-ignore-case': 'tBridge' } }] }, [
    [{ service: 'EventBRIDGE' }, true],
    [{ service: 'bridges' }, false],
  ]),
  ...rows('equals-ignore-case', { Name: [{ 'equals-ignore-case': 'alice' }] }, [
    [{ Name: 'Alice' }, true],
    [{ Name: 'ALICE' }, true],
    [{ Name: 'Alicia' }, false],
    [{ Name: null }, false],
  ]),

  // wildcard: * matches any run (none included); \* and \\ are literal.
  ...rows('wildcard', { FileName: [{ wildcard: 'dir/*.png' }] }, [
    [{ FileName: 'dir/a.png' }, true],
    [{ FileName: 'dir/sub/a.png' }, true],
    [{ FileName: 'dir/.png' }, true],
    [{ FileName: 'other/a.png' }, false],
    [{ FileName: 'dir/a.jpg' }, false],
  ]),
  ...rows('wildcard with several stars', { title: [{ wildcard: '*ab*ab' }] }, [
    [{ title: 'abab' }, true],
    [{ title: 'xxabyyab' }, true],
    [{ title: 'aab' }, false],
    [{ title: 'ab' }, false],
  ]),
  ...rows('wildcard without a star is an exact match', { s: [{ wildcard: 'Simple' }] }, [
    [{ s: 'Simple' }, true],
    [{ s: 'SimpleQueue' }, false],
  ]),
  ...rows('wildcard escapes', { s: [{ wildcard: 'a\\*b\\\\*' }] }, [
    [{ s: 'a*b\\' }, true],
    [{ s: 'a*b\\tail' }, true],
    [{ s: 'axb\\' }, false],
  ]),
  ...rows('wildcard on a number', { s: [{ wildcard: '*' }] }, [
    [{ s: 'anything' }, true],
    [{ s: 5 }, false],
  ]),

  // anything-but: any value present (null included) other than those excluded.
  ...rows('anything-but a string', { detail: { state: [{ 'anything-but': 'initializing' }] } }, [
    [ec2, true],
    [withDetail({ state: 'initializing' }), false],
    [withDetail({ state: null }), true],
    [withDetail({ state: ['initializing', 'running'] }), true],
    [withDetail({ state: ['initializing'] }), false],
    [{ detail: {} }, false],
  ]),
  ...rows('anything-but a number', { detail: { 'x-limit': [{ 'anything-but': 123 }] } }, [
    [ec2, true],
    [withDetail({ 'x-limit': 123 }), false],
    [withDetail({ 'x-limit': '123' }), true],
  ]),
  ...rows(
    'anything-but a list of strings',
    { detail: { state: [{ 'anything-but': ['stopped', 'overloaded'] }] } },
    [
      [ec2, true],
      [withDetail({ state: 'overloaded' }), false],
    ],
  ),
  ...rows(
    'anything-but a list of numbers',
    { detail: { 'x-limit': [{ 'anything-but': [100, 200, 300] }] } },
    [
      [ec2, true],
      [withDetail({ 'x-limit': 200 }), false],
    ],
  ),
  ...rows('anything-but a prefix', { detail: { state: [{ 'anything-but': { prefix: 'init' } }] } }, [
    [ec2, true],
    [withDetail({ state: 'initializing' }), false],
    [withDetail({ state: 12 }), true],
    [{ detail: {} }, false],
  ]),
  ...rows('anything-but prefixes', { state: [{ 'anything-but': { prefix: ['init', 'test'] } }] }, [
    [{ state: 'post-init' }, true],
    [{ state: 'test-1' }, false],
  ]),
  ...rows('anything-but a suffix', { FileName: [{ 'anything-but': { suffix: '.png' } }] }, [
    [{ FileName: 'a.jpg' }, true],
    [{ FileName: 'a.png' }, false],
  ]),
  ...rows(
    'anything-but ignoring case',
    { state: [{ 'anything-but': { 'equals-ignore-case': 'initializing' } }] },
    [
      [{ state: 'running' }, true],
      [{ state: 'INITIALIZING' }, false],
    ],
  ),
  ...rows(
    'anything-but a list ignoring case',
    { state: [{ 'anything-but': { 'equals-ignore-case': ['initializing', 'stopped'] } }] },
    [
      [{ state: null }, true],
      [{ state: 'Stopped' }, false],
    ],
  ),
  ...rows('anything-but a wildcard', { FilePath: [{ 'anything-but': { wildcard: '*/lib/*' } }] }, [
    [{ FilePath: 'src/app/a.ts' }, true],
    [{ FilePath: 'src/lib/a.ts' }, false],
    [{ FilePath: 123 }, true],
  ]),

  // numeric: JSON numbers only.
  ...rows(
    'numeric',
    {
      detail: {
        'c-count': [{ numeric: ['>', 0, '<=', 5] }],
        'd-count': [{ numeric: ['<', 10] }],
        'x-limit': [{ numeric: ['=', 3.018e2] }],
      },
    },
    [
      [ec2, true],
      [withDetail({ 'c-count': 0 }), false],
      [withDetail({ 'c-count': 6 }), false],
      [withDetail({ 'c-count': '5' }), false],
      [withDetail({ 'd-count': 10 }), false],
      [withDetail({ 'x-limit': 301.81 }), false],
    ],
  ),
  ...rows('numeric >= and <', { price: [{ numeric: ['>=', 10, '<', 20] }] }, [
    [{ price: 10 }, true],
    [{ price: 19.99 }, true],
    [{ price: 20 }, false],
    [{ price: 9 }, false],
    [{ price: [1, 15] }, true],
  ]),
  ...rows('numeric >', { price: [{ numeric: ['>', 10] }] }, [
    [{ price: 10.5 }, true],
    [{ price: 10 }, false],
  ]),
  ...rows('numeric <=', { price: [{ numeric: ['<=', -1] }] }, [
    [{ price: -1 }, true],
    [{ price: 0 }, false],
  ]),

  // exists: on leaves only; an object is not a leaf, an empty array has none.
  ...rows('exists false', { detail: { 'c-count': [{ exists: false }] } }, [
    [{ detail: { state: ['initializing', 'running'] } }, true],
    [{ detail: { state: 'running', 'c-count': { c1: 100 } } }, true],
    [{ source: 'no detail at all' }, true],
    [ec2, false],
    [withDetail({ 'c-count': null }), false],
  ]),
  ...rows('exists true', { detail: { 'c-count': [{ exists: true }] } }, [
    [ec2, true],
    [withDetail({ 'c-count': null }), true],
    [{ detail: { 'c-count': { c1: 100 } } }, false],
    [{ detail: {} }, false],
  ]),
  ...rows('exists on arrays', { tags: [{ exists: true }] }, [
    [{ tags: ['a'] }, true],
    [{ tags: [] }, false],
    [{ tags: [{ name: 'a' }] }, false],
  ]),
  ...rows('exists false on an empty array', { tags: [{ exists: false }] }, [
    [{ tags: [] }, true],
    [{ tags: ['a'] }, false],
  ]),
  ...rows('exists false below an empty array', { items: { id: [{ exists: false }] } }, [
    [{ items: [] }, true],
    [{ items: [{ id: 1 }] }, false],
  ]),
  ...rows('exists or a value', { state: [{ exists: false }, 'running'] }, [
    [{}, true],
    [{ state: 'running' }, true],
    [{ state: 'stopped' }, false],
  ]),

  // cidr: IPv4 and IPv6 addresses given as strings.
  ...rows('cidr', { detail: { 'source-ip': [{ cidr: '10.0.0.0/24' }] } }, [
    [ec2, true],
    [withDetail({ 'source-ip': '10.0.1.33' }), false],
    [withDetail({ 'source-ip': 'not an address' }), false],
    [withDetail({ 'source-ip': 123 }), false],
    [withDetail({ 'source-ip': '::ffff:10.0.0.33' }), false],
  ]),
  ...rows('cidr IPv6', { ip: [{ cidr: '2001:db8::/32' }] }, [
    [{ ip: '2001:db8::1' }, true],
    [{ ip: '2001:db9::1' }, false],
    [{ ip: '10.0.0.1' }, false],
  ]),

  // $or, at the top and nested, with ANDs inside.
  ...rows('$or', { $or: [{ Location: ['New York'] }, { Day: ['Monday'] }] }, [
    [{ Location: 'New York', Day: 'Tuesday' }, true],
    [{ Location: 'Boston', Day: 'Monday' }, true],
    [{ Location: 'Boston', Day: 'Tuesday' }, false],
  ]),
  ...rows(
    '$or next to fields and inside detail',
    {
      $or: [{ metricName: ['CPUUtilization', 'ReadLatency'] }, { namespace: ['AWS/EC2', 'AWS/ES'] }],
      detail: { $or: [{ source: ['aws.cloudwatch'] }, { 'detail-type': ['CloudWatch Alarm State Change'] }] },
    },
    [
      [{ namespace: 'AWS/EC2', detail: { source: 'aws.cloudwatch' } }, true],
      [{ metricName: 'ReadLatency', detail: { 'detail-type': 'CloudWatch Alarm State Change' } }, true],
      [{ metricName: 'Other', detail: { source: 'aws.cloudwatch' } }, false],
      [{ namespace: 'AWS/EC2', detail: { source: 'aws.ec2' } }, false],
    ],
  ),
  ...rows(
    'nested $or and AND',
    {
      source: ['aws.cloudwatch'],
      $or: [
        { metricName: ['CPUUtilization', 'ReadLatency'] },
        {
          metricType: ['MetricType'],
          namespace: ['AWS/EC2', 'AWS/ES'],
          $or: [{ metricId: [1234] }, { spaceId: [1000] }],
        },
        { scope: ['Service'] },
      ],
    },
    [
      [{ source: 'aws.cloudwatch', metricType: 'MetricType', namespace: 'AWS/ES', spaceId: 1000 }, true],
      [{ source: 'aws.cloudwatch', scope: 'Service' }, true],
      [{ source: 'aws.cloudwatch', metricType: 'MetricType', namespace: 'AWS/ES', spaceId: 1 }, false],
      [{ source: 'aws.cloudwatch', metricType: 'Other', namespace: 'AWS/ES', metricId: 1234 }, false],
      [{ source: 'aws.ec2', scope: 'Service' }, false],
    ],
  ),

  // The content-filtering page's complex example, on the sample event.
  ...rows(
    'complex example',
    {
      time: [{ prefix: '2017-10-02' }],
      detail: {
        state: [{ 'anything-but': 'initializing' }],
        'c-count': [{ numeric: ['>', 0, '<=', 5] }],
        'd-count': [{ numeric: ['<', 10] }],
        'x-limit': [{ 'anything-but': [100, 200, 300] }],
        'source-ip': [{ cidr: '10.0.0.0/8' }],
      },
    },
    [
      [ec2, true],
      [withDetail({ 'x-limit': 300 }), false],
      [withDetail({ 'source-ip': '192.168.0.1' }), false],
    ],
  ),
  // A subscription as the docs show it.
  ...rows(
    'significant changes',
    { 'detail-type': ['contact.changed'], detail: { significantChanges: ['department'] } },
    [
      [{ 'detail-type': 'contact.changed', detail: { significantChanges: ['name', 'department'] } }, true],
      [{ 'detail-type': 'contact.changed', detail: { significantChanges: ['name'] } }, false],
      [{ 'detail-type': 'contact.changed', detail: { significantChanges: [] } }, false],
      [{ 'detail-type': 'sale.sold', detail: { significantChanges: ['department'] } }, false],
    ],
  ),
];

describe('compilePattern', () => {
  it.each(table)('$name: $matches', ({ pattern, event, matches }) => {
    expect(compilePattern(pattern)(event)).toBe(matches);
  });

  it('does not read the pattern again after compiling', () => {
    const pattern = { source: ['aws.ec2'] };
    const matches = compilePattern(pattern);
    pattern.source[0] = 'other';

    expect(matches(ec2)).toBe(true);
  });
});

const nest = (levels: number, leaf: unknown = ['x']): Record<string, unknown> => {
  let pattern: Record<string, unknown> = { leaf };
  for (let i = 1; i < levels; i++) pattern = { a: pattern };
  return pattern;
};

/** [pattern, the path the error names, a fragment of its reason] */
const rejected: [string, unknown, string, string][] = [
  ['an array', [], '', 'expected a JSON object'],
  ['a string', 'source', '', 'expected a JSON object'],
  ['null', null, '', 'expected a JSON object'],
  ['an empty pattern', {}, '', 'empty object'],
  ['an empty nested object', { detail: {} }, 'detail', 'empty object'],
  [
    'a value that is not an array',
    { source: 'aws.ec2' },
    'source',
    'expected an array of values or a nested object',
  ],
  ['a number instead of an array', { detail: { n: 5 } }, 'detail.n', 'expected an array'],
  ['null instead of an array', { source: null }, 'source', 'expected an array'],
  ['an empty array', { source: [] }, 'source', 'empty array'],
  ['an array in the array', { source: [['a']] }, 'source[0]', 'exactly one of'],
  ['undefined in the array', { source: [undefined] }, 'source[0]', 'exactly one of'],
  ['an infinite number', { n: [Number.POSITIVE_INFINITY] }, 'n[0]', 'finite'],
  [
    'a number no double holds exactly',
    { detail: { n: [{ numeric: ['>', 0, '<', new InexactNumber('1E-325')] }] } },
    'detail.n[0].numeric[3]',
    '1E-325 is not exactly a double (it reads as 0): EventBridge refuses such a number',
  ],
  [
    'an unknown operator',
    { s: [{ prefx: 'a' }] },
    's[0]',
    'unknown operator "prefx"; accepted: anything-but, cidr',
  ],
  ['an inherited name as operator', { s: [{ toString: 'a' }] }, 's[0]', 'unknown operator "toString"'],
  ['two operators in one object', { s: [{ prefix: 'a', suffix: 'b' }] }, 's[0]', 'exactly one of'],
  ['an empty operator object', { s: [{}] }, 's[0]', 'exactly one of'],
  ['prefix of a number', { s: [{ prefix: 5 }] }, 's[0].prefix', 'a string or {"equals-ignore-case": string}'],
  ['prefix with another operator', { s: [{ prefix: { wildcard: 'a*' } }] }, 's[0].prefix', 'a string or'],
  [
    'prefix ignoring case of a number',
    { s: [{ prefix: { 'equals-ignore-case': 1 } }] },
    's[0].prefix',
    'a string',
  ],
  ['suffix of a list', { s: [{ suffix: ['a'] }] }, 's[0].suffix', 'a string or'],
  [
    'equals-ignore-case of a list',
    { s: [{ 'equals-ignore-case': ['a'] }] },
    's[0].equals-ignore-case',
    'a string',
  ],
  ['wildcard of a number', { s: [{ wildcard: 5 }] }, 's[0].wildcard', 'a string'],
  ['consecutive stars', { s: [{ wildcard: 'a**b' }] }, 's[0].wildcard', 'consecutive *'],
  ['a backslash escaping a letter', { s: [{ wildcard: 'a\\b' }] }, 's[0].wildcard', 'may only escape'],
  ['a trailing backslash', { s: [{ wildcard: 'a\\' }] }, 's[0].wildcard', 'may only escape'],
  ['anything-but null', { s: [{ 'anything-but': null }] }, 's[0].anything-but', 'a string, a number'],
  ['anything-but a boolean', { s: [{ 'anything-but': true }] }, 's[0].anything-but', 'a string, a number'],
  ['anything-but an empty list', { s: [{ 'anything-but': [] }] }, 's[0].anything-but', 'non-empty list'],
  ['anything-but a mixed list', { s: [{ 'anything-but': ['a', 1] }] }, 's[0].anything-but', 'only strings'],
  [
    'anything-but an empty prefix',
    { s: [{ 'anything-but': { prefix: '' } }] },
    's[0].anything-but',
    'prefix',
  ],
  [
    'anything-but a prefix of a number',
    { s: [{ 'anything-but': { prefix: 5 } }] },
    's[0].anything-but',
    'prefix',
  ],
  [
    'anything-but numeric',
    { s: [{ 'anything-but': { numeric: ['>', 1] } }] },
    's[0].anything-but',
    'wildcard',
  ],
  [
    'anything-but two operators',
    { s: [{ 'anything-but': { prefix: 'a', suffix: 'b' } }] },
    's[0].anything-but',
    '',
  ],
  [
    'anything-but a bad wildcard',
    { s: [{ 'anything-but': { wildcard: ['ok', 'a**'] } }] },
    's[0].anything-but.wildcard',
    'consecutive *',
  ],
  ['numeric of a number', { n: [{ numeric: 5 }] }, 'n[0].numeric', '[op, number]'],
  ['numeric of nothing', { n: [{ numeric: [] }] }, 'n[0].numeric', '[op, number]'],
  ['numeric without a number', { n: [{ numeric: ['>'] }] }, 'n[0].numeric', '[op, number]'],
  ['numeric of a string', { n: [{ numeric: ['>', '5'] }] }, 'n[0].numeric', '[op, number]'],
  ['an unknown comparison', { n: [{ numeric: ['!=', 1] }] }, 'n[0].numeric', 'op one of =, <, <=, >, >='],
  ['a range upside down', { n: [{ numeric: ['<', 1, '>', 0] }] }, 'n[0].numeric', '[">" or ">="'],
  ['a range = and <', { n: [{ numeric: ['=', 1, '<', 2] }] }, 'n[0].numeric', '[op, number]'],
  ['an empty range', { n: [{ numeric: ['>', 5, '<', 5] }] }, 'n[0].numeric', 'lower bound must be below'],
  [
    'a range with extra terms',
    { n: [{ numeric: ['>', 0, '<', 5, '<', 6] }] },
    'n[0].numeric',
    '[op, number]',
  ],
  ['exists of a string', { s: [{ exists: 'true' }] }, 's[0].exists', 'true or false'],
  ['exists of a number', { s: [{ exists: 1 }] }, 's[0].exists', 'true or false'],
  ['cidr of a number', { ip: [{ cidr: 10 }] }, 'ip[0].cidr', 'a CIDR block'],
  ['cidr without a mask', { ip: [{ cidr: '10.0.0.0' }] }, 'ip[0].cidr', '"10.0.0.0" is not a CIDR block'],
  ['cidr with a mask too long', { ip: [{ cidr: '10.0.0.0/33' }] }, 'ip[0].cidr', 'is not a CIDR block'],
  ['cidr of a bad address', { ip: [{ cidr: '300.0.0.0/8' }] }, 'ip[0].cidr', 'is not a CIDR block'],
  ['cidr with two slashes', { ip: [{ cidr: '10.0.0.0/8/1' }] }, 'ip[0].cidr', 'is not a CIDR block'],
  ['cidr IPv6 mask too long', { ip: [{ cidr: '::1/129' }] }, 'ip[0].cidr', 'is not a CIDR block'],
  ['cidr with a bad mask', { ip: [{ cidr: '10.0.0.0/x' }] }, 'ip[0].cidr', 'is not a CIDR block'],
  ['$or of an object', { $or: { a: ['x'] } }, '$or', 'at least two object patterns'],
  ['$or with one alternative', { $or: [{ a: ['x'] }] }, '$or', 'at least two'],
  ['$or with a value', { $or: [{ a: ['x'] }, 'b'] }, '$or[1]', 'expected an object of fields'],
  ['$or with an empty alternative', { $or: [{ a: ['x'] }, {}] }, '$or[1]', 'empty object'],
  [
    'a bad leaf inside $or',
    { detail: { $or: [{ a: ['x'] }, { b: [{ exists: 1 }] }] } },
    'detail.$or[1].b[0].exists',
    'true or false',
  ],
  [
    'too deep a pattern',
    nest(MAX_PATTERN_DEPTH + 1),
    'a.'.repeat(MAX_PATTERN_DEPTH).slice(0, -1),
    'nested more than',
  ],
  ['too long a pattern', { s: ['x'.repeat(4100)] }, '', "more than EventBridge's 4096"],
];

describe('compilePattern rejects what it cannot evaluate', () => {
  it.each(rejected)('%s', (_name, pattern, path, reason) => {
    let thrown: unknown;
    try {
      compilePattern(pattern);
    } catch (error) {
      thrown = error;
    }

    expect(thrown).toBeInstanceOf(PatternError);
    const error = thrown as PatternError;
    expect(error.path).toBe(path);
    expect(error.message).toContain(`at ${path || '(root)'}: `);
    expect(error.message).toContain(reason);
    expect(error.message).not.toContain('\n');
  });

  it('accepts the deepest pattern allowed', () => {
    const matches = compilePattern(nest(MAX_PATTERN_DEPTH));

    expect(matches(nest(MAX_PATTERN_DEPTH, 'x'))).toBe(true);
    expect(matches(nest(MAX_PATTERN_DEPTH, 'y'))).toBe(false);
  });
});

describe('events nested deeper than any stack', () => {
  /** `value` inside `levels` arrays: [[[…value…]]]. */
  const inArrays = (levels: number, value: unknown) =>
    JSON.parse(`${'['.repeat(levels)}${JSON.stringify(value)}${']'.repeat(levels)}`) as unknown;

  it('matches leaves and objects found 9,000 arrays deep, as EventBridge flattens arrays', () => {
    const event = {
      'detail-type': 'contact.changed',
      detail: { FieldValues: { x: inArrays(9000, 'deep') }, rows: inArrays(9000, { k: 'v' }) },
    };

    expect(compilePattern({ detail: { FieldValues: { x: ['deep'] } } })(event)).toBe(true);
    expect(compilePattern({ detail: { FieldValues: { x: [{ prefix: 'sha' }] } } })(event)).toBe(false);
    expect(compilePattern({ detail: { rows: { k: ['v'] } } })(event)).toBe(true);
    expect(compilePattern({ detail: { FieldValues: { x: [{ exists: true }] } } })(event)).toBe(true);
  });
});

describe('isExactDouble: what EventBridge accepts as a number of a pattern', () => {
  it.each([
    ['0.1', true],
    ['3.018e2', true],
    ['-0.0', true],
    ['1E+21', true],
    ['1.7976931348623157e308', true],
    ['1E-325', false],
    ['1e400', false],
    ['0.30000000000000001', false],
    ['9007199254740993', false],
  ])('%s: %s', (text, exact) => {
    expect(isExactDouble(text)).toBe(exact);
  });
});
