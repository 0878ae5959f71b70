import { CONTEXT_PLACEHOLDER } from '../../lib/config/crm.js';
import { loadEnvFile } from '../../local/env-file.js';
import { parseCommandLine, runCommand, UsageError } from '../command-line.js';
import { localWebhookUrl, receiverSecret } from '../sender-config.js';
import { crmClient, runStream } from './client.js';
import { startCrm } from './start.js';
import { TABLES } from './tables.js';

const USAGE = `Usage: npm run crm                      start the CRM simulator (127.0.0.1:CRM_PORT, default 3100)
       npm run crm -- <command> [--context C]   drive a running one (CRM_URL, default http://127.0.0.1:3100)

Commands:
  create <table> [id] [field=value ...]     change <table> <id> field=value ...
  softdelete <table> <id>                   delete <table> <id>
  action <table> <id> <verb>                (e.g. action sale 9 sold)
  rows <table> [id]                         status (webhooks, counters, discarded events)
  stop-webhook [id]    start-webhook [id]   (default webhook 1; start sends the test delivery first)
  stream [--rate 20] [--rows 200] [--for 60s]
  tenant <Running|Suspended|OfflineMaintenance|MigrationPending|Deleted|move>   (move: a new host, 421 at the old)
  faults [--rate-limit N] [--unavailable 20s] [--slow 500ms]   (no option: none)
Options:
  --context C          the tenant (default CRM_CONTEXT, else Cust12345)
  --rate N, --rows N, --for D, --seed S   stream: changes per second (20), over how many rows (200),
                       for how long (60s), the random seed
  --rate-limit N, --unavailable D, --slow D   faults: 429 beyond N requests/s, 503 for D, each answer D late
  --help, -h           this text
Tables: ${[...TABLES.keys()].join(', ')}
Settings: CRM_PORT, CRM_DATA_DIR (.crm-data), CRM_CONTEXT (Cust12345), CRM_TARGET_URL (npm start's
/webhook), CRM_URL; the secret and STATE_EVENT_TOKEN are the receiver's (.env, .data/webhook-secret).`;

const COMMANDS =
  'create, change, softdelete, delete, action, rows, status, stop-webhook, start-webhook, stream, faults';

/**
 * The two settings that point the receiver's reconciliation at this simulator, ready to paste into a shell:
 * the API URL with its `{ContextIdentifier}` placeholder, and the simulator's Basic credentials for every tenant.
 */
function receiverSettings(apiUrl: string): string {
  const credentials = JSON.stringify({ '*': { type: 'basic', user: 'crm', password: 'crm' } });
  return `CRM_API_URL='${apiUrl}' CRM_CREDENTIALS='${credentials}'`;
}

/** `20s`, `500ms`, `2m` or plain seconds, as milliseconds. */
function duration(name: string, raw: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(raw.trim());
  if (!match) throw new UsageError(`--${name} must be a duration such as 500ms, 20s or 2m, not ${raw}`);
  return Number(match[1]) * ({ ms: 1, s: 1000, m: 60_000 }[match[2] ?? 's'] ?? 1000);
}

function integer(name: string, raw: string | undefined): number {
  const value = Number(raw);
  if (raw === undefined || !Number.isSafeInteger(value) || value < 1)
    throw new UsageError(`${name} must be a whole number >= 1, not ${raw}`);
  return value;
}

function fieldsOf(pairs: string[]): Record<string, string> {
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) throw new UsageError(`${pair} is not field=value`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

async function serve(context: string): Promise<void> {
  const port = Number(process.env.CRM_PORT?.trim() || '3100');
  const dataDir = process.env.CRM_DATA_DIR?.trim() || '.crm-data';
  const targetUrl = process.env.CRM_TARGET_URL?.trim() || localWebhookUrl();
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new Error(`CRM_PORT must be a port number, not ${process.env.CRM_PORT}`);
  const crm = await startCrm({ dataDir, port, log: (line) => console.log(`crm: ${line}`) });
  const data = crm.core.store.context(context);
  if (data.webhooks.length === 0) {
    const events = [...TABLES.values()].flatMap((table) =>
      table.verbs.map((verb) => `${table.entity}.${verb}`),
    );
    const token = process.env.STATE_EVENT_TOKEN?.trim();
    const rows = await crm.core.register(context, {
      name: 'crm-webhook-receiver',
      events,
      targetUrl,
      secret: receiverSecret(context),
    });
    await crm.core.register(context, {
      name: 'crm-webhook-receiver-state',
      events: ['started', 'stopped', 'errors'].map((verb) => `webhook${rows.id}.${verb}`),
      targetUrl,
      headers: token ? { 'X-Receiver-Token': token } : {},
    });
  }
  const [main, ...watchers] = data.webhooks;
  console.log(
    `crm simulator ready: API ${crm.apiUrl(context)} (Basic crm:crm) · webhook ${main?.id} (${main?.state}) delivers to ${main?.targetUrl}` +
      `${watchers.length ? `, its state events via webhook ${watchers.map((w) => w.id).join(', ')}` : ''} · data ${dataDir}/ · npm run crm -- --help`,
  );
  console.log(
    `reconciliation against it: start the receiver with\n  ${receiverSettings(crm.apiUrl(CONTEXT_PLACEHOLDER))} npm start`,
  );
  const stop = () => {
    void crm.stop().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

const OPTIONS = {
  context: { type: 'string' },
  rate: { type: 'string', default: '20' },
  rows: { type: 'string', default: '200' },
  for: { type: 'string', default: '60s' },
  seed: { type: 'string' },
  'rate-limit': { type: 'string' },
  unavailable: { type: 'string' },
  slow: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

async function main(argv: string[]): Promise<number> {
  loadEnvFile(process.env.ENV_FILE ?? '.env');
  const { values, positionals } = parseCommandLine({ args: argv, allowPositionals: true, options: OPTIONS });
  const [command, ...args] = positionals;
  const context = values.context ?? (process.env.CRM_CONTEXT?.trim() || 'Cust12345');
  if (values.help || command === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (command === undefined || command === 'serve') {
    await serve(context);
    return -1;
  }
  const client = crmClient(
    process.env.CRM_URL?.trim() || `http://127.0.0.1:${process.env.CRM_PORT?.trim() || '3100'}`,
    context,
  );
  const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));
  const [table = '', id, ...rest] = args;
  switch (command) {
    case 'create': {
      const numbered = id !== undefined && /^\d+$/.test(id);
      const pairs = numbered ? rest : [id, ...rest].filter((pair): pair is string => pair !== undefined);
      print(
        await client.change({
          op: 'create',
          table,
          ...(numbered ? { id: Number(id) } : {}),
          fields: fieldsOf(pairs),
        }),
      );
      return 0;
    }
    case 'change':
      print(await client.change({ op: 'change', table, id: integer('id', id), fields: fieldsOf(rest) }));
      return 0;
    case 'softdelete':
    case 'delete':
      print(await client.change({ op: command, table, id: integer('id', id) }));
      return 0;
    case 'action':
      print(await client.change({ op: 'action', table, id: integer('id', id), action: rest[0] ?? '' }));
      return 0;
    case 'rows':
      print(await client.rows(table, id === undefined ? undefined : integer('id', id)));
      return 0;
    case 'status':
      print(await client.status());
      return 0;
    case 'stop-webhook':
    case 'start-webhook': {
      const webhook = await client.setState(
        integer('webhook id', args[0] ?? '1'),
        command === 'stop-webhook' ? 'Stopped' : 'Active',
      );
      console.log(`webhook ${webhook.id} is ${webhook.state}`);
      return 0;
    }
    case 'tenant':
      print(await client.tenant(table === 'move' ? { move: true } : { state: table }));
      return 0;
    case 'faults':
      print(
        await client.faults({
          rateLimitPerSecond:
            values['rate-limit'] === undefined ? undefined : integer('--rate-limit', values['rate-limit']),
          unavailableForMs:
            values.unavailable === undefined ? undefined : duration('unavailable', values.unavailable),
          slowMs: values.slow === undefined ? undefined : duration('slow', values.slow),
        }),
      );
      return 0;
    case 'stream': {
      const abort = new AbortController();
      process.once('SIGINT', () => abort.abort());
      const plan = {
        rate: integer('--rate', values.rate),
        rows: integer('--rows', values.rows),
        durationMs: duration('for', values.for),
        seed: values.seed === undefined ? undefined : integer('--seed', values.seed),
        signal: abort.signal,
      };
      console.log(
        `stream: ${plan.rate} changes/s over ${plan.rows} rows for ${plan.durationMs / 1000} s (Ctrl-C stops)`,
      );
      const done = await runStream(client, plan);
      console.log(
        `stream: ${done.changes} changes in ${done.seconds} s (${done.created} creates), ${done.events} raised an event, ${done.silent} nothing; ${done.deliveries} deliveries started`,
      );
      const status = (await client.status()).contexts as Record<
        string,
        { discarded: number; webhooks: Array<Record<string, unknown>> }
      >;
      const mine = status[context];
      for (const webhook of mine?.webhooks ?? [])
        console.log(
          `webhook ${webhook.id} ${webhook.state}: ${webhook.totalCalls} calls, ${webhook.totalErrors} errors, ${webhook.discarded} events discarded, ${webhook.notSent ?? 0} not sent (not Active)`,
        );
      return 0;
    }
    default:
      throw new UsageError(`unknown command ${command}: it takes ${COMMANDS}`);
  }
}

runCommand('crm', OPTIONS, () => main(process.argv.slice(2)));
