import { familyOf } from '../lib/events/index.js';
import { nearestEventName, nearMissOf } from '../lib/events/nearest.js';
import { loadEnvFile } from '../local/env-file.js';
import { parseCommandLine, runCommand, UsageError } from './command-line.js';
import { httpRequest } from './http-client.js';
import {
  ALL_SAMPLE_EVENTS,
  buildRegistrationTestBody,
  buildSampleBody,
  buildSampleDelivery,
  type SampleEventName,
} from './samples.js';
import { localWebhookUrl, senderSecret } from './sender-config.js';

const USAGE = `Usage: npm run send -- <event> [options]

Builds a realistic delivery of <event> (all its headers, a fresh EventId, FieldValues and Changes as the
spec or the CRM's samples show them), signs it with the configured secret and POSTs it to the local receiver.

Options:
  --primary-key N      the row's PrimaryKey (default: a sample's)
  --context C          the ContextIdentifier (default Cust12345)
  --webhook-id N       the webhook of a webhook<id>.started|stopped|errors event
  --url U              where to POST (default: npm start's /webhook, from PORT and HOST)
  --prefix P           the header prefix (default X-SuperOffice)
  --secret S           sign with S (default: WEBHOOK_SECRET(S), else the secret npm start generated)
  --unsigned           send it without a signature
  --token T            X-Receiver-Token of a state event (default STATE_EVENT_TOKEN)
  --force              send a name a typo away from the catalogue's as it is (the receiver parks it)
  --help, -h           this text

Events: ${ALL_SAMPLE_EVENTS.join(', ')}
        (any list.<name>.created|changed|softdeleted and y_<table>.created|changed|deleted works too;
        webhook<id>.started etc. too; "test" is the CRM's registration check, answered 200 and not
        queued; any other name, e.g. invoice.created, is sent as an event outside the catalogue, which
        the receiver parks)`;

/**
 * `npm run send`: one delivery, as the CRM would send it, to the local receiver (like `stripe trigger`).
 */
const OPTIONS = {
  'primary-key': { type: 'string' },
  context: { type: 'string' },
  'webhook-id': { type: 'string' },
  url: { type: 'string' },
  prefix: { type: 'string' },
  secret: { type: 'string' },
  unsigned: { type: 'boolean' },
  token: { type: 'string' },
  force: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

async function main(argv: string[]): Promise<number> {
  loadEnvFile(process.env.ENV_FILE ?? '.env');
  const { values, positionals } = parseCommandLine({ args: argv, allowPositionals: true, options: OPTIONS });
  const [name] = positionals;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (name === undefined) throw new UsageError('the event to send is missing (for example contact.created)');

  const stateMatch = /^webhook(\d*)\.(started|stopped|errors)$/.exec(name);
  const webhookId = values['webhook-id'] ?? stateMatch?.[1];
  const context = values.context ?? 'Cust12345';
  const integer = (option: string, raw: string | undefined): number | undefined => {
    if (raw === undefined || raw === '') return undefined;
    const value = Number(raw);
    if (!Number.isSafeInteger(value)) throw new UsageError(`--${option} must be an integer, not ${raw}`);
    return value;
  };
  const primaryKey = stateMatch
    ? integer('webhook-id', webhookId)
    : integer('primary-key', values['primary-key']);

  let body: Record<string, unknown>;
  let warning: string | undefined;
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
    // An event outside the catalogue: same envelope, its own Event and Entity; a typo is refused.
    const typo = nearMissOf(name);
    if (typo !== undefined && !values.force)
      throw new UsageError(
        `${name} is not an event of the catalogue: did you mean ${typo}? (--force sends ${name}, which the receiver parks)`,
      );
    warning = `warning: ${name} is outside the catalogue (did you mean ${nearestEventName(name)}?): the receiver parks it`;
    body = {
      ...buildSampleBody('contact.changed', { primaryKey, context }),
      Event: name,
      Entity: name.split('.')[0],
    };
  } else {
    throw new UsageError(
      `unknown event ${JSON.stringify(name)}: it takes an event name such as contact.created`,
    );
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
    if (warning) console.warn(warning);
    return answer.status === 200 ? 0 : 1;
  } catch (error) {
    console.error(
      `← no answer: ${error instanceof Error ? error.message : String(error)} (is npm start running?)`,
    );
    return 1;
  }
}

runCommand('send', OPTIONS, () => main(process.argv.slice(2)));
