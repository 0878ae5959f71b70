import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ROOT, runCli } from '../support/cli.js';

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
  it('refuses a name a typo away from the catalogue, naming the one meant, exit 2, nothing sent', async () => {
    const run = await runCli('tools/send.ts', ['contact.craeted', '--url', url, '--secret', 's']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.errors).toEqual([
      'contact.craeted is not an event of the catalogue: did you mean contact.created? (--force sends contact.craeted, which the receiver parks)',
      expect.stringMatching(/^options: .* --force --help /),
    ]);
  });

  it('with --force sends the near miss as it is, and warns after the answer', async () => {
    const run = await runCli('tools/send.ts', ['contac.created', '--force', '--url', url, '--secret', 's']);
    expect(run.code).toBe(0);
    expect(run.errors).toEqual([
      'warning: contac.created is outside the catalogue (did you mean contact.created?): the receiver parks it',
    ]);
    expect(run.stdout).toContain('"Event": "contac.created"');
  });

  it('sends a name of its own outside the catalogue (parking shown) with the warning', async () => {
    const run = await runCli('tools/send.ts', ['invoice.created', '--url', url, '--secret', 's']);
    expect(run.code).toBe(0);
    expect(run.errors).toEqual([
      expect.stringMatching(/^warning: invoice\.created is outside the catalogue/),
    ]);
  });

  it('sends a name of the catalogue without a warning', async () => {
    const run = await runCli('tools/send.ts', ['sale.sold', '--url', url, '--secret', 's']);
    expect(run).toMatchObject({ code: 0, errors: [] });
  });
});

describe('npm run simulate', () => {
  it('a receiver that is not there is one line, exit 1, without the usage text', async () => {
    const run = await runCli('tools/simulate-cli.ts', [
      '--events',
      '10',
      '--rows',
      '2',
      '--url',
      url,
      '--admin-url',
      'http://127.0.0.1:1',
    ]);
    expect(run.code).toBe(1);
    expect(run.errors).toEqual([
      expect.stringMatching(
        /^simulate stopped: .*ECONNREFUSED.* \(is npm start running, and at these URLs\?\)$/,
      ),
    ]);
    expect(run.stdout).not.toContain('Usage');
  });

  it('Ctrl-C stops sending and prints what was sent, exit 130', async () => {
    // An admin API with empty queues, and a webhook that accepts each delivery once the test lets it.
    let posts = 0;
    const held: Array<() => void> = [];
    const slow = createServer((req, res) => {
      req.resume().on('end', () => {
        if (req.method === 'GET') return res.end('[]');
        posts++;
        held.push(() => res.end());
      });
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'tools/simulate-cli.ts',
        '--events',
        '1000',
        '--rows',
        '10',
        '--concurrency',
        '2',
        '--url',
        `${base}/webhook`,
        '--admin-url',
        base,
      ],
      { cwd: CLI_ROOT, env: { ...process.env, WEBHOOK_SECRET: 's' } },
    );
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
    });
    try {
      // Three deliveries answered, two more under way: then Ctrl-C.
      while (posts < 5) {
        held.shift()?.();
        await new Promise((resolve) => setImmediate(resolve));
      }
      child.kill('SIGINT');
      const [code] = await once(child, 'exit');
      expect(code).toBe(130);
      expect(stdout).toMatch(/^interrupted {5}after \d+ of 1000 deliveries; rows not checked$/m);
      expect(stdout).toMatch(/^accepted {8}[3-9]$/m);
    } finally {
      child.kill('SIGKILL');
      for (const release of held) release();
      slow.closeAllConnections();
      slow.close();
    }
  });
});
