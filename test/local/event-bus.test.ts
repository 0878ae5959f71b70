import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type LocalEventBus, startLocalEventBus } from '../../local/bus/start-bus.js';
import { StartupError } from '../../local/startup-error.js';

/** The runtime's event bus step: what it sets in the functions' environment, and what stops a start. */
const dir = mkdtempSync(join(tmpdir(), 'crm-event-bus-'));
const sqs = new SQSClient({ region: 'us-east-1' });
const started: LocalEventBus[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((bus) => bus.close()));
});
afterAll(() => {
  sqs.destroy();
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, yaml: string): string {
  const path = join(dir, name);
  writeFileSync(path, yaml);
  return path;
}

let runs = 0;

async function start(env: NodeJS.ProcessEnv, lines: string[] = []) {
  const dataDir = join(dir, `data-${++runs}`);
  mkdirSync(dataDir);
  const bus = await startLocalEventBus({
    sqs,
    env,
    stage: 'local',
    region: 'us-east-1',
    dataDir,
    port: 0,
    log: (line) => lines.push(line),
  });
  started.push(bus);
  return bus;
}

const ONE =
  '- { name: sold, pattern: { detail-type: [sale.sold] }, target: { url: "http://127.0.0.1:9/x" } }\n';

describe('the event bus step of npm start', () => {
  it("points the functions at the stage's bus and the local endpoint, and publishes when there are subscriptions", async () => {
    const env: NodeJS.ProcessEnv = { SUBSCRIPTIONS_FILE: file('one.yml', ONE) };
    const bus = await start(env);

    expect(bus.subscriptions).toBe(1);
    expect(env).toMatchObject({
      EVENT_BUS_NAME: 'crm-webhook-receiver-local',
      AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
      PUBLISH_EVENTS: 'true',
    });
    expect(bus.endpoint).toBe(`http://127.0.0.1:${bus.port}`);
  });

  it('publishes nothing without subscriptions, and PUBLISH_EVENTS overrides that either way', async () => {
    const none: NodeJS.ProcessEnv = { SUBSCRIPTIONS_FILE: file('none.yml', '') };
    expect((await start(none)).subscriptions).toBe(0);
    expect(none.PUBLISH_EVENTS).toBe('false');

    const forced: NodeJS.ProcessEnv = { SUBSCRIPTIONS_FILE: none.SUBSCRIPTIONS_FILE, PUBLISH_EVENTS: 'true' };
    await start(forced);
    expect(forced.PUBLISH_EVENTS).toBe('true');

    const off: NodeJS.ProcessEnv = { SUBSCRIPTIONS_FILE: file('one.yml', ONE), PUBLISH_EVENTS: '0' };
    await start(off);
    expect(off.PUBLISH_EVENTS).toBe('0');
  });

  it('stops the start with one line for an unusable file or an unset auth variable', async () => {
    const invalid = { SUBSCRIPTIONS_FILE: file('bad.yml', '- { name: Bad }\n') };
    await expect(start(invalid)).rejects.toThrow(StartupError);
    await expect(start(invalid)).rejects.toThrow(
      /^.*bad\.yml: subscription "Bad": name: must be 1-32 of a-z/,
    );

    const auth = {
      SUBSCRIPTIONS_FILE: file(
        'auth.yml',
        `- name: sold
  pattern: { detail-type: [sale.sold] }
  target: { url: "http://127.0.0.1:9/x" }
  auth: { header: X-Key, parameter: /k, env: SOLD_KEY }
`,
      ),
    };
    await expect(start(auth)).rejects.toThrow(
      new StartupError('subscription "sold": set SOLD_KEY, the value of its X-Key header locally'),
    );
    expect(started).toEqual([]);
  });
});
