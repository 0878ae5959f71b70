import { describe, expect, it } from 'vitest';
import { CRM_TABLES, createCrmClient, isRefusal } from '../../lib/crm/index.js';
import { startServer } from '../support/http-server.js';
import { BASIC } from './support.js';

describe('a CRM that refuses a table', () => {
  it('is one line with the status and the first line of its answer, JSON or text, and no retry', async () => {
    const answers = [
      {
        status: 403,
        type: 'application/json',
        body: '{"Error":"Access denied to ticket\\r\\n   at Archive.Check()"}',
      },
      { status: 404, type: 'text/html', body: '  Not Found \r\n<html><body>the table ticket</body></html>' },
    ];
    let asked = 0;
    const server = await startServer((_req, res) => {
      const answer = answers[asked++ % answers.length]!;
      res.writeHead(answer.status, { 'content-type': answer.type });
      res.end(answer.body);
    });
    try {
      const client = createCrmClient({
        apiUrl: `${server.url}/{ContextIdentifier}/api/v1`,
        credentials: { '*': BASIC },
      });
      const refusal = (call: Promise<unknown>) =>
        call.then(
          () => new Error('answered'),
          (error: unknown) => error as Error,
        );
      const json = await refusal(client.listIds('Cust1', CRM_TABLES.ticket!));
      const text = await refusal(client.listIds('Cust1', CRM_TABLES.ticket!));
      expect(json.message).toBe(
        'GET /Cust1/api/v1/archive/dynamic answered HTTP 403: Access denied to ticket',
      );
      expect(text.message).toBe('GET /Cust1/api/v1/archive/dynamic answered HTTP 404: Not Found');
      expect([json, text].every(isRefusal)).toBe(true);
      expect(asked).toBe(2);
    } finally {
      await server.close();
    }
  });
});
