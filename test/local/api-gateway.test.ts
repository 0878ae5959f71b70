import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  type ApiGatewayRequest,
  matchRoute,
  toApiGatewayEvent,
  writeApiGatewayResult,
} from '../../local/lambda/api-gateway.js';

const base: ApiGatewayRequest = {
  method: 'POST',
  url: '/webhook',
  rawHeaders: ['Host', 'localhost:3000', 'Content-Type', 'application/json; charset=utf-8'],
  body: Buffer.from('{"a":1}'),
  sourceIp: '127.0.0.1',
};
const options = { routeKey: 'POST /webhook', now: new Date('2025-05-14T16:11:02.459Z') };

describe('toApiGatewayEvent (HTTP API payload format 2.0)', () => {
  it('builds the event API Gateway hands to the Lambda', () => {
    const event = toApiGatewayEvent(base, options);
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: 'POST /webhook',
      rawPath: '/webhook',
      rawQueryString: '',
      headers: { host: 'localhost:3000', 'content-type': 'application/json; charset=utf-8' },
      body: '{"a":1}',
      isBase64Encoded: false,
      requestContext: {
        http: { method: 'POST', path: '/webhook', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1' },
        routeKey: 'POST /webhook',
        stage: '$default',
        time: '14/May/2025:16:11:02 +0000',
        timeEpoch: 1747239062459,
        domainName: 'localhost:3000',
      },
    });
    expect(event.queryStringParameters).toBeUndefined();
    expect(event.cookies).toBeUndefined();
  });

  it('lower-cases header names and joins duplicates with commas', () => {
    const event = toApiGatewayEvent(
      { ...base, rawHeaders: ['X-SuperOffice-Event', 'contact.created', 'X-Dup', 'a', 'x-dup', 'b'] },
      options,
    );
    expect(event.headers).toEqual({ 'x-superoffice-event': 'contact.created', 'x-dup': 'a,b' });
  });

  it('keeps header and query names such as `constructor` and `__proto__` as own keys, as AWS does', () => {
    const event = toApiGatewayEvent(
      {
        ...base,
        url: '/webhook?constructor=1&__proto__=2&toString=3',
        rawHeaders: ['Constructor', 'a', '__proto__', 'b', 'valueOf', 'c', 'valueOf', 'd'],
      },
      options,
    );
    const expected = JSON.parse('{"constructor":"a","__proto__":"b","valueof":"c,d"}');
    expect(Object.entries(event.headers)).toEqual(Object.entries(expected));
    expect(Object.entries(event.queryStringParameters!)).toEqual([
      ['constructor', '1'],
      ['__proto__', '2'],
      ['toString', '3'],
    ]);
  });

  it('moves cookies to `cookies` and parses the query string, duplicates joined', () => {
    const event = toApiGatewayEvent(
      { ...base, url: '/webhook?token=abc&x=1&x=2', rawHeaders: ['Cookie', 'a=1; b=2', 'Cookie', 'c=3'] },
      options,
    );
    expect(event.cookies).toEqual(['a=1', 'b=2', 'c=3']);
    expect(event.headers.cookie).toBeUndefined();
    expect(event.rawQueryString).toBe('token=abc&x=1&x=2');
    expect(event.queryStringParameters).toEqual({ token: 'abc', x: '1,2' });
  });

  it('base64-encodes binary and non-UTF-8 bodies, and keeps a UTF-8 BOM', () => {
    const latin1 = Buffer.from([0x7b, 0xe9, 0x7d]);
    expect(toApiGatewayEvent({ ...base, body: latin1 }, options)).toMatchObject({
      body: latin1.toString('base64'),
      isBase64Encoded: true,
    });
    const binary = { ...base, rawHeaders: ['Content-Type', 'application/octet-stream'] };
    expect(toApiGatewayEvent(binary, options).isBase64Encoded).toBe(true);
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{}')]);
    const event = toApiGatewayEvent({ ...base, body: bom }, options);
    expect(Buffer.from(event.body!, 'utf8')).toEqual(bom);
  });

  it('leaves out the body of an empty request', () => {
    const event = toApiGatewayEvent({ ...base, body: Buffer.alloc(0) }, options);
    expect(event.body).toBeUndefined();
    expect(event.isBase64Encoded).toBe(false);
  });
});

describe('matchRoute', () => {
  const routes = [{ method: 'POST', path: '/webhook' }];
  it('matches method and path exactly, as an HTTP API route does', () => {
    expect(matchRoute(routes, 'post', '/webhook')).toBe(routes[0]);
    expect(matchRoute(routes, 'GET', '/webhook')).toBeUndefined();
    expect(matchRoute(routes, 'POST', '/other')).toBeUndefined();
    expect(matchRoute([{ method: 'ANY', path: '/webhook' }], 'PUT', '/webhook')).toBeDefined();
  });
});

describe('writeApiGatewayResult', () => {
  const roundTrip = async (result: Parameters<typeof writeApiGatewayResult>[1]) => {
    const server = createServer((_, res) => writeApiGatewayResult(res, result));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      return await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
        (resolve, reject) => {
          request({ port, host: '127.0.0.1' }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
              resolve({
                status: res.statusCode!,
                headers: res.headers,
                body: Buffer.concat(chunks).toString(),
              }),
            );
          })
            .on('error', reject)
            .end();
        },
      );
    } finally {
      server.close();
    }
  };

  it('writes a structured result with its headers and cookies, decoding base64 bodies', async () => {
    const answer = await roundTrip({
      statusCode: 401,
      headers: { 'content-type': 'application/problem+json' },
      cookies: ['a=1'],
      body: Buffer.from('{"title":"no"}').toString('base64'),
      isBase64Encoded: true,
    });
    expect(answer).toMatchObject({
      status: 401,
      headers: { 'content-type': 'application/problem+json', 'set-cookie': ['a=1'] },
      body: '{"title":"no"}',
    });
  });

  it('answers 200 JSON for a plain returned value', async () => {
    expect(await roundTrip({ ok: true } as never)).toMatchObject({ status: 200, body: '{"ok":true}' });
  });
});
