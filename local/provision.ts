import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { loadDefinitions } from '../infra/definitions.js';
import { ROW_SET_INDEX } from '../lib/store/keys.js';
import type { DynamoEmulator } from './emulators/dynamo-emulator.js';
import { ensureQueues, ensureTables, hasIndex } from './emulators/resources.js';
import type { SqsEmulator } from './emulators/sqs-emulator.js';
import { LOCAL_CREDENTIALS } from './http/port-guard.js';
import { setFunctionEnvironment } from './lambda/function-wiring.js';
import type { LocalRuntimeOptions, Started } from './runtime.js';
import { ensureSecret } from './webhook-secret.js';

/** The SQS emulator's write-ahead journal under DATA_DIR (emulators/sqs-journal.ts). */
export const SQS_JOURNAL = 'sqs-journal.ndjson';

export interface Clients {
  sqs: SQSClient;
  dynamodb: DynamoDBClient;
  credentials: { accessKeyId: string; secretAccessKey: string };
  destroy(): void;
}

/** The runtime's own SDK clients, pointed at the emulators. */
export function localClients(
  sqsEmulator: SqsEmulator,
  dynamoEmulator: DynamoEmulator,
  region: string,
): Clients {
  const credentials = { ...LOCAL_CREDENTIALS };
  const sqs = new SQSClient({ endpoint: sqsEmulator.endpoint, region, credentials });
  const dynamodb = new DynamoDBClient({ endpoint: dynamoEmulator.endpoint, region, credentials });
  return {
    sqs,
    dynamodb,
    credentials,
    destroy() {
      sqs.destroy();
      dynamodb.destroy();
    },
  };
}

/**
 * The queues and tables of infra/resources.yml, the journaled messages put back, and the functions'
 * environment pointed at all of it (the webhook secret included).
 */
export async function createResources(
  options: LocalRuntimeOptions,
  startedWith: Started,
  clients: Clients,
  ssmEndpoint: string,
) {
  const { env, log, dataDir, region, sqsEmulator, dynamoEmulator } = startedWith;
  const definitions = loadDefinitions({ stage: options.stage ?? 'local' });
  const [queues] = await Promise.all([
    ensureQueues(clients.sqs, definitions.queues, { visibilityTimeout: options.visibilityTimeout }),
    ensureTables(clients.dynamodb, definitions.tables),
  ]);
  const rows = definitions.tables.find((table) => table.key === 'rows')?.name;
  if (rows !== undefined && !(await hasIndex(clients.dynamodb, rows, ROW_SET_INDEX)))
    log(
      `DATA_DIR ${dataDir} holds a rows table from before its ${ROW_SET_INDEX} index, which dynalite cannot add: reconciliation cannot find rows deleted in the CRM here; to have it, start on a fresh DATA_DIR (move ${dataDir} aside or set DATA_DIR to a new directory)`,
    );
  const recovered = sqsEmulator.recover();
  if (recovered.restored > 0)
    log(
      `restored ${recovered.restored} queued message${recovered.restored === 1 ? '' : 's'} from ${join(dataDir, SQS_JOURNAL)}`,
    );
  if (recovered.kept > 0)
    log(
      `kept ${recovered.kept} journaled message${recovered.kept === 1 ? '' : 's'} of queues this version does not define`,
    );
  const tables = setFunctionEnvironment(env, {
    queues,
    tables: definitions.tables,
    region,
    credentials: clients.credentials,
    sqsEmulator,
    dynamoEmulator,
    ssmEndpoint,
    log,
  });
  return { definitions, queues, tables, secret: ensureSecret(env, dataDir) };
}

/** What createResources made: the definitions, queues, tables and webhook secret. */
export type Resources = Awaited<ReturnType<typeof createResources>>;
