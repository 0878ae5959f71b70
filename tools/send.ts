import { parseArgs } from 'node:util';
import { familyOf } from '../lib/events/index.js';
import { nearestEventName } from '../lib/events/nearest.js';
import { loadEnvFile } from '../local/env-file.js';
import { httpRequest } from './http-client.js';
import {
  ALL_SAMPLE_EVENTS,
  buildRegistrationTestBody,
  buildSampleBody,
  buildSampleDelivery,
  type SampleEventName,
} from './samples.js';
import { localWebhookUrl, senderSecret } from './sender-config.js';

const USAGE = `Usage: npm run send -- <event> [--primary-key N] [--context C] [--webhook-id N] [--url U]
                                [--prefix X-SuperOffice] [--secret S] [--unsigned] [--token T]

Builds a realistic delivery of <event> (all its headers, a fresh EventId, FieldValues and Changes as the
spec or the CRM's samples show them), signs it with the configured secret and POSTs it to the local receiver.

Events: ${ALL_SAMPLE_EVENTS.join(', ')}
        (any list.<name>.created|changed|softdeleted and y_<table>.created|changed|deleted works too;
        webhook<id>.started etc. too; "test" is the CRM's registration check, answered 200 and not
        queued; any other name, e.g. invoice.created, is sent as an event outside the catalogue, which
        the receiver parks)`;

/**
 * `npm run send`: one delivery, as the CRM would send it, to the local receiver (like `stripe trigger`).
 */
async function main(argv: string[]): Promise<number> {
  loadEnvFile(process.env.ENV_FILE ?? '.env');
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'primary-key': { type: 'string' },
      context: { type: 'string' },
      'webhook-id': { type: 'string' },
      url: { type: 'string' },
      prefix: { type: 'string' },
      secret: { type: 'string' },
      unsigned: { type: 'boolean' },
      token: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [name] = positionals;
  if (values.help || name === undefined) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }

  const stateMatch = /^webhook(\d*)\.(started|stopped|errors)$/.exec(name);
  const webhookId = values['webhook-id'] ?? stateMatch?.[1];
  const context = values.context ?? 'Cust12345';
  const integer = (option: string, raw: string | undefined): number | undefined => {
    if (raw === undefined || raw === '') return undefined;
    const value = Number(raw);
    if (!Number.isSafeInteger(value)) throw new Error(`--${option} must be an integer`);
    return value;
  };
  const primaryKey = stateMatch
    ? integer('webhook-id', webhookId)
    : integer('primary-key', values['primary-key']);

  let body: Record<string, unknown>;
  if (stateMatch) {
    body = buildSampleBody(`webhook.${stateMatch[2]}` as SampleEventName, {
      primaryKey: primaryKey ?? 1,
      context,
    });
  } else if (name === 'test') {
    body = buildRegistrationTestBody({ context });
  } else if (familyOf(name) !== undefined) {
    body = buildSampleBody(name, { primaryKey, context });
  } else if (/^[\w-]+\.[\w-]+$/.test(name)) {
    // An event outside the catalogue: same envelope, its own Event and Entity.
    console.warn(
      `warning: ${name} is outside the catalogue (did you mean ${nearestEventName(name)}?): the receiver parks it`,
    );
    body = {
      ...buildSampleBody('contact.changed', { primaryKey, context }),
      Event: name,
      Entity: name.split('.')[0],
    };
  } else {
    console.error(`Unknown event ${JSON.stringify(name)}.\n\n${USAGE}`);
    return 2;
  }

  const secret = values.unsigned ? undefined : (values.secret ?? senderSecret(context));
  const delivery = buildSampleDelivery(body, { secret, prefix: values.prefix });
  const token = values.token ?? process.env.STATE_EVENT_TOKEN;
  if (stateMatch && token) delivery.headers['X-Receiver-Token'] = token;
  const url = values.url ?? localWebhookUrl();

  console.log(`POST ${url}`);
  for (const [header, value] of Object.entries(delivery.headers)) console.log(`${header}: ${value}`);
  console.log(`\n${JSON.stringify(body, null, 2)}\n`);
  try {
    const answer = await httpRequest('POST', url, delivery.headers, delivery.body);
    console.log(`← ${answer.status} in ${answer.ms.toFixed(1)} ms`);
    if (answer.body) console.log(answer.body);
    return answer.status === 200 ? 0 : 1;
  } catch (error) {
    console.error(
      `← no answer: ${error instanceof Error ? error.message : String(error)} (is npm start running?)`,
    );
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  },
);
