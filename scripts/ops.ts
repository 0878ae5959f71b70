/**
 * Operations against a deployed stage, reading every name from the stack's outputs; `npm run ops -- --help`
 * prints the commands (HELP below). Region and credentials come from the usual AWS environment
 * (AWS_REGION, AWS_PROFILE, ...), or --region; a missing one is one line before any AWS call.
 */

import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { pathToFileURL } from 'node:url';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { PatternError } from '../lib/bus/pattern/errors.js';
import { ReplayBusyError, replayEventMatcher } from '../lib/ingest/index.js';
import { parseCommandLine, UsageError, usageLines } from '../tools/command-line.js';
import { createAwsSource } from './ops/aws-source.js';
import { backfillRowIndexOnStage } from './ops/backfill-command.js';
import {
  gaps,
  type OpsClients,
  OpsError,
  parked,
  queueKey,
  readOutputs,
  redrive,
  replayParkedOnStage,
  rows,
  status,
  webhooks,
} from './ops/commands.js';
import { serveDashboard } from './ops/dashboard.js';
import { erase } from './ops/erase-command.js';
import { reconcile } from './ops/reconcile-command.js';
import { redriveSubscription, rotateSubscriptionKey } from './ops/subscription-commands.js';
import {
  isTenantCommand,
  parseTenantArgs,
  TENANT_COMMANDS,
  TENANT_HELP,
  tenantCommand,
} from './ops/tenant-commands.js';

/**
 * The clients of every command, CloudWatch and EventBridge for the dashboard and the subscriptions, SSM for
 * rotate-subscription-key (built on first use when not given).
 */
export type DashboardClients = OpsClients & {
  cloudWatch: CloudWatchClient;
  eventBridge: EventBridgeClient;
  ssm?: SSMClient;
};

/** The commands, in the order the usage line names them. */
export const COMMANDS = [
  'status',
  'parked',
  'replay-parked',
  'redrive',
  'rows',
  'webhooks',
  'gaps',
  'reconcile',
  'backfill-row-index',
  'dashboard',
  'redrive-subscription',
  'rotate-subscription-key',
  'erase',
] as const;

const USAGE = `usage: npm run ops -- <${[...COMMANDS, ...TENANT_COMMANDS].join('|')}> --stage S [options] (--help lists them)`;

/** What `--help` prints: every command and its options. */
export const HELP = `Usage: npm run ops -- <command> --stage S [--region R] [options]

  status                               queues: visible, in flight, dead-lettered
  parked [--max N]                     parked deliveries and why (each look is a receive)
  redrive <queue> [--rate N]           DLQ → its queue (StartMessageMoveTask)
  replay-parked [--event PATTERN] [--max N]   parked → their queues, when they route now
  rows <context> <entity> <primaryKey> [--events]
  webhooks
  gaps [--context C]
  reconcile --context C (--from ISO [--to ISO] | --full) [--entities a,b] [--max-deletes N]
                                       the CRM's rows back (the reconcile queue)
  backfill-row-index                   once after deploying the byRowSet index: older rows into it
  dashboard [--port P]                 the dashboard on 127.0.0.1:P (default 3002)
  redrive-subscription <name> [--max N]        a subscription's DLQ → its target again
  rotate-subscription-key <name> < key         a url subscription's API key, in SSM and in effect
${TENANT_HELP}
  erase --context C [--entity E --id N]        a row's personal data (or a whole tenant's) erased:
                                       row, history, parked and dead-letter messages (docs/privacy.md)

Region and credentials come from the usual AWS environment (AWS_REGION, AWS_PROFILE, ...), or --region.
--help, -h lists this.`;
const ROOT = join(import.meta.dirname, '..');

/** Standard input as text, or "" when it is a terminal (a key typed there would show on the screen). */
async function readStdin(): Promise<string> {
  return process.stdin.isTTY ? '' : text(process.stdin);
}

export async function main(
  argv: string[],
  clients?: DashboardClients,
  input: () => Promise<string> = readStdin,
): Promise<unknown> {
  if (isTenantCommand(argv)) return tenants(argv, clients);
  const { values, positionals } = parseCommandLine({ args: argv, allowPositionals: true, options: OPTIONS });
  if (values.help) return HELP;
  const [command, ...rest] = positionals;
  if (command === undefined) throw new UsageError(USAGE);
  if (!(COMMANDS as readonly string[]).includes(command))
    throw new UsageError(`unknown command ${command}; ${USAGE}`);
  if (values.stage === undefined) throw new UsageError(`--stage is missing; ${USAGE}`);
  const region = values.region;
  const ops = clients ?? (await awsClients(region));
  const outputs = await readOutputs(ops, values.stage);
  switch (command) {
    case 'status':
      return status(ops, outputs);
    case 'parked':
      return parked(ops, outputs, values.max === undefined ? 10 : Number(values.max));
    case 'replay-parked': {
      try {
        replayEventMatcher(values.event);
      } catch (error) {
        if (error instanceof PatternError) throw new OpsError(`--event ${values.event}: ${error.message}`);
        throw error;
      }
      return replayParkedOnStage(ops, outputs, {
        eventPattern: values.event,
        max: positiveMax(values.max),
      }).catch((error: unknown) => {
        if (error instanceof ReplayBusyError) throw new OpsError(error.message);
        throw error;
      });
    }
    case 'redrive-subscription': {
      if (rest[0] === undefined)
        throw new OpsError('usage: npm run ops -- redrive-subscription <name> --stage S [--max N]');
      return redriveSubscription(ops, outputs, {
        stage: values.stage,
        name: rest[0],
        max: positiveMax(values.max),
      });
    }
    case 'rotate-subscription-key': {
      if (rest[0] === undefined)
        throw new OpsError(
          'usage: npm run ops -- rotate-subscription-key <name> --stage S < file-with-the-new-key',
        );
      const ssm = ops.ssm ?? new SSMClient({ region });
      return rotateSubscriptionKey(
        { ssm, eventBridge: ops.eventBridge },
        { stage: values.stage, name: rest[0], value: await input(), root: ROOT },
      );
    }
    case 'redrive': {
      if (rest[0] === undefined)
        throw new OpsError('usage: npm run ops -- redrive <queue> --stage S [--rate N]');
      return redrive(
        ops,
        outputs,
        queueKey(rest[0]),
        values.rate === undefined ? undefined : Number(values.rate),
      );
    }
    case 'rows': {
      const [context, entity, primaryKey] = rest;
      if (context === undefined || entity === undefined || primaryKey === undefined) {
        throw new OpsError('usage: npm run ops -- rows <context> <entity> <primaryKey> --stage S [--events]');
      }
      return rows(ops, outputs, { context, entity, primaryKey: Number(primaryKey), events: values.events });
    }
    case 'webhooks':
      return webhooks(ops, outputs);
    case 'gaps':
      return gaps(ops, outputs, values.context);
    case 'reconcile':
      return reconcile(ops, outputs, values);
    case 'erase':
      return erase(ops, outputs, values);
    case 'backfill-row-index':
      return backfillRowIndexOnStage(ops, outputs, {
        progress: (line) => process.stderr.write(`${line}\n`),
      });
    case 'dashboard': {
      const port = values.port === undefined ? 3002 : Number(values.port);
      if (!Number.isInteger(port) || port < 0 || port > 65_535)
        throw new OpsError(`--port ${values.port}: an integer from 0 to 65535 accepted`);
      const source = createAwsSource({
        clients: ops,
        outputs,
        stage: values.stage,
        region: await ops.sqs.config.region(),
      });
      // Keeps running until interrupted; `close` is for tests (JSON output leaves it out).
      const { url, close } = await serveDashboard(source, port);
      return { dashboard: url, stage: values.stage, close };
    }
    default:
      throw new OpsError(USAGE);
  }
}

/** A tenant command (scripts/ops/tenant-commands.ts), with the SSM and EventBridge clients it needs. */
async function tenants(argv: string[], clients: DashboardClients | undefined): Promise<unknown> {
  const { command, values } = parseTenantArgs(argv);
  if (values.stage === undefined) throw new OpsError(`--stage is missing; ${USAGE}`);
  const ops = clients ?? (await awsClients(values.region));
  const ssm = ops.ssm ?? new SSMClient({ region: values.region });
  const outputs = await readOutputs(ops, values.stage);
  return tenantCommand({ ...ops, ssm }, outputs, values.stage, command, values);
}

/** The options of every command (HELP says which takes which). */
const OPTIONS = {
  stage: { type: 'string' },
  region: { type: 'string' },
  max: { type: 'string' },
  rate: { type: 'string' },
  context: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  entities: { type: 'string' },
  entity: { type: 'string' },
  id: { type: 'string' },
  full: { type: 'boolean', default: false },
  'max-deletes': { type: 'string' },
  event: { type: 'string' },
  events: { type: 'boolean', default: false },
  port: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/**
 * The SDK clients for the region given or found in the environment, once the region and the credentials
 * resolve (both are read locally, before any AWS call), else an OpsError saying what to set.
 */
async function awsClients(region: string | undefined): Promise<DashboardClients> {
  const cloudFormation = new CloudFormationClient({ region });
  try {
    await cloudFormation.config.region();
  } catch {
    throw new OpsError(
      'no AWS region: set AWS_REGION (or a profile with a region in AWS_PROFILE), or pass --region',
    );
  }
  try {
    await cloudFormation.config.credentials();
  } catch (error) {
    // The SDK's own reason too: an expired SSO session is not the same fix as no credentials at all.
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new OpsError(
      `no AWS credentials: set AWS_PROFILE (aws configure, aws sso login) or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (the SDK: ${reason})`,
    );
  }
  return {
    cloudFormation,
    sqs: new SQSClient({ region }),
    dynamo: DynamoDBDocumentClient.from(new DynamoDBClient({ region })),
    cloudWatch: new CloudWatchClient({ region }),
    eventBridge: new EventBridgeClient({ region }),
  };
}

function positiveMax(value: string | undefined): number | undefined {
  const max = value === undefined ? undefined : Number(value);
  if (max !== undefined && (!Number.isSafeInteger(max) || max <= 0))
    throw new OpsError('--max must be a positive integer');
  return max;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  // The SDK's notice that its 2027 versions need Node 22: this project pins its SDK, Node 20.19+ runs it.
  // The SDK documents this variable to silence it (aws/aws-sdk-js-v3#7983).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  main(process.argv.slice(2)).then(
    (result) => console.log(typeof result === 'string' ? result : JSON.stringify(result, null, 2)),
    (error: unknown) => {
      if (error instanceof UsageError) {
        console.error(usageLines(error, 'ops', OPTIONS));
        process.exitCode = 2;
        return;
      }
      console.error(error instanceof OpsError ? error.message : error);
      process.exitCode = 1;
    },
  );
}
