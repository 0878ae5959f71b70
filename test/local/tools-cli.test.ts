import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

/** `npm run send` and `npm run simulate` as a newcomer meets them, against a receiver answering 200. */
let receiver: Server;
let url: string;

beforeAll(async () => {
  receiver = createServer((req, res) => req.resume().on('end', () => res.end()));
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhook`;
});
afterAll(() => new Promise((resolve) => receiver.close(resolve)));

describe('npm run send', () => {
  it('warns of a name outside the catalogue with the nearest known one, and still sends it', async () => {
    const run = await runCli('tools/send.ts', ['contac.created', '--url', url, '--secret', 's']);
    expect(run.code).toBe(0);
    expect(run.errors).toEqual([
      'warning: contac.created is outside the catalogue (did you mean contact.created?): the receiver parks it',
    ]);
    expect(run.stdout).toContain('"Event": "contac.created"');
  });

  it('sends a name of the catalogue without a warning', async () => {
    const run = await runCli('tools/send.ts', ['sale.sold', '--url', url, '--secret', 's']);
    expect(run).toMatchObject({ code: 0, errors: [] });
  });
});
