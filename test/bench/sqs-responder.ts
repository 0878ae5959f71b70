import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

/**
 * A stand-in SQS endpoint for the benches, in its own process (so its CPU is not counted with the
 * ingest's): it answers every SendMessage of the JSON protocol at once, with the MD5 the SDK checks.
 */
const RESPONDER = `
const { createServer } = require('node:http');
const { createHash, randomUUID } = require('node:crypto');
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const input = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const md5 = createHash('md5').update(input.MessageBody ?? '').digest('hex');
    const body = JSON.stringify({ MessageId: randomUUID(), MD5OfMessageBody: md5 });
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

export interface SqsResponder {
  url: string;
  close(): void;
}

export async function startSqsResponder(): Promise<SqsResponder> {
  const child: ChildProcess = spawn(process.execPath, ['-e', RESPONDER], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  return { url: `http://127.0.0.1:${chunk.toString().trim()}`, close: () => child.kill() };
}
