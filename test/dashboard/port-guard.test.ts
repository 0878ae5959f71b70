import { createServer, type ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { guardPort, withoutCors } from '../../local/http/port-guard.js';
import { httpRequest } from '../../tools/http-client.js';
import { listenForTest } from '../support/http-server.js';

/** Tries every way a listener can set headers, a CORS one each time. */
const corsEverywhere = (req: { url?: string }, res: ServerResponse) => {
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('x-kept', 'yes');
  if (req.url === '/object')
    res.writeHead(200, { 'Access-Control-Allow-Credentials': 'true', 'x-also': '1' });
  if (req.url === '/array') res.writeHead(200, 'OK', ['Access-Control-Max-Age', '600', 'x-also', '1']);
  res.end('ok');
};
const signedBy = (key: string) =>
  `AWS4-HMAC-SHA256 Credential=${key}/20250101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=00`;

describe('guardPort (every port of the local runtime but the ingest)', () => {
  it('serves the SDK: its own loopback Host, no Origin, signed with the runtime key; refuses everything else with 403', async () => {
    const base = await listenForTest(createServer(guardPort({ accessKeyId: 'local' }, corsEverywhere)));
    const port = new URL(base).port;
    const ask = (method: string, headers: Record<string, string>) =>
      httpRequest(method, `${base}/`, headers).then((answer) => answer.status);

    expect(await ask('POST', { authorization: signedBy('local') })).toBe(200);
    expect(await ask('POST', { authorization: signedBy('local'), host: `localhost:${port}` })).toBe(200);
    const refused = {
      'no Authorization': {},
      'another key': { authorization: signedBy('AKIDEXAMPLE') },
      'a key that starts like it': { authorization: signedBy('localx') },
      'not SigV4': { authorization: 'Basic bG9jYWw6bG9jYWw=' },
      'a foreign Origin': { authorization: signedBy('local'), origin: 'https://evil.example' },
      'its own Origin (a page served by this port)': { authorization: signedBy('local'), origin: base },
      'a rebound Host': { authorization: signedBy('local'), host: `evil.example:${port}` },
    };
    for (const [what, headers] of Object.entries(refused)) {
      expect({ what, status: await ask('POST', headers) }).toEqual({ what, status: 403 });
    }
    expect(await ask('OPTIONS', { authorization: signedBy('local') })).toBe(403);
  });

  it('answers a refusal as an AWS JSON error, without reading the body', async () => {
    let read = false;
    const base = await listenForTest(
      createServer(
        guardPort({ accessKeyId: 'local' }, (req, res) => {
          read = true;
          req.resume();
          res.end();
        }),
      ),
    );
    const answer = await httpRequest('POST', base, {}, 'x'.repeat(100_000));

    expect(read).toBe(false);
    expect(answer.status).toBe(403);
    expect(answer.headers['x-amzn-errortype']).toBe('AccessDeniedException');
    expect(JSON.parse(answer.body)).toEqual({
      __type: 'AccessDeniedException',
      message: "requests must be signed (AWS SigV4) with the local runtime's access key id local",
    });
  });

  it('with sameOrigin, serves a page of its own origin only', async () => {
    const base = await listenForTest(createServer(guardPort({ sameOrigin: true }, corsEverywhere)));
    const port = new URL(base).port;
    const status = (origin: string) => httpRequest('GET', base, { origin }).then((answer) => answer.status);

    expect(await status(base)).toBe(200);
    expect(await status(`http://localhost:${port}`)).toBe(200);
    for (const origin of ['https://evil.example', 'null', `http://127.0.0.1:${Number(port) + 1}`]) {
      expect({ origin, status: await status(origin) }).toEqual({ origin, status: 403 });
    }
  });
});

describe('withoutCors (the ingest, and every guarded port)', () => {
  it('sends no Access-Control-* header, however the listener sets one, and keeps the others', async () => {
    const base = await listenForTest(createServer(withoutCors(corsEverywhere)));
    for (const path of ['/', '/object', '/array']) {
      const answer = await httpRequest('GET', `${base}${path}`, { origin: 'https://evil.example' });
      expect({ path, status: answer.status, body: answer.body }).toEqual({ path, status: 200, body: 'ok' });
      expect(Object.keys(answer.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
      expect(answer.headers['x-kept']).toBe('yes');
      if (path !== '/') expect(answer.headers['x-also']).toBe('1');
    }
  });
});
