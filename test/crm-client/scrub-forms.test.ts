import { describe, expect, it } from 'vitest';
import { CRM_TABLES, createCrmClient } from '../../lib/crm/index.js';
import { startServer } from '../support/http-server.js';

/** A Basic password with the characters JSON and URL encoders escape (`/`, `+`), digits in its runs. */
const PASSWORD = 'Ab/cdEfgh+ijk9LmnOp/qrsTuv+wxyz12/34AB';
/** Pieces of it any leak would show (each part between its `/` and `+`). */
const PIECES = /Ab|cdEfgh|ijk9|LmnOp|qrsTuv|wxyz12|34AB/i;

/** The message of the error a listing gets from a CRM of the test's own that answers `status` and `body`. */
async function refusalOf(status: number, body: string): Promise<string> {
  const server = await startServer((_req, res) => {
    res.writeHead(status, { 'content-type': 'text/plain' });
    res.end(body);
  });
  try {
    const client = createCrmClient({
      apiUrl: `${server.url}/{ContextIdentifier}/api/v1`,
      credentials: { '*': { type: 'basic', user: 'crm', password: PASSWORD } },
    });
    return await client.listIds('Cust1', CRM_TABLES.ticket!).then(
      () => 'answered',
      (error: unknown) => (error as Error).message,
    );
  } finally {
    await server.close();
  }
}

describe('a credential the CRM echoes in forms the plain search misses', () => {
  it.each([
    [
      'escaped by a .NET JSON writer (\\u002B, \\/) in a text that is not JSON',
      (value: string) =>
        `{"Message":"refused password ${value.replaceAll('/', '\\/').replaceAll('+', '\\u002B')}" (cut`,
    ],
    [
      'URL-encoded in lower case',
      (value: string) =>
        `refused ${encodeURIComponent(value).replace(/%[0-9A-F]{2}/g, (code) => code.toLowerCase())}`,
    ],
    [
      'straddling where the reason was cut (200 characters in)',
      (value: string) => `refused ${'word '.repeat(38)}${value}`,
    ],
  ])('%s: no piece of it is left', async (_, echo) => {
    const message = await refusalOf(400, echo(PASSWORD));
    expect(message).toMatch(/^GET \/Cust1\/api\/v1\/archive\/dynamic answered HTTP 400: .*refused/);
    expect(message.replace(/^GET \/Cust1\/api\/v1\/archive\/dynamic answered HTTP 400: /, '')).not.toMatch(
      PIECES,
    );
  });
});
