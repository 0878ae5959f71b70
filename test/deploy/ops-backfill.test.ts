import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createStoredRows } from '../../lib/store/index.js';
import { backfillRowIndexOnStage } from '../../scripts/ops/backfill-command.js';
import { OpsError, readOutputs } from '../../scripts/ops/commands.js';
import { type DashboardClients, main } from '../../scripts/ops.js';
import { runCli } from '../support/cli.js';
import { type LocalDynamo, startDynalite } from '../support/dynamo.js';
import { putOldRow } from '../support/old-rows.js';
import { describedStack, opsClients, outputsWith } from '../support/stack-outputs.js';

/**
 * `npm run ops -- backfill-row-index` against dynalite: the stage's outputs (mocked CloudFormation) name
 * a rows table of the emulator holding rows as a version before the byRowSet index wrote them.
 */
let dynamo: LocalDynamo;
let rows: string;
let clients: DashboardClients;
const cloudFormation = new CloudFormationClient({ region: 'eu-west-1' });
const stack = mockClient(cloudFormation);

function stageOutputs(table: string) {
  stack.on(DescribeStacksCommand).resolves(describedStack(outputsWith({ RowsTableName: table })));
}

beforeAll(async () => {
  dynamo = await startDynalite();
  ({ rows } = await dynamo.createTables());
  stageOutputs(rows);
  clients = opsClients({ cloudFormation, dynamo: dynamo.doc });
});
afterEach(() => stageOutputs(rows));
afterAll(async () => {
  stack.restore();
  await dynamo.close();
});

const run = (stage = 'test') =>
  main(['backfill-row-index', '--stage', stage], clients).catch((caught: unknown) => caught);

describe('npm run ops -- backfill-row-index', () => {
  it('puts the rows stored before the index into it, answers one line, and a second run updates nothing', async () => {
    for (const pk of [1, 2, 3]) await putOldRow(dynamo, rows, 'Cust9', pk);
    const stored = createStoredRows({ client: dynamo.doc, table: rows });
    expect(await stored.keys('Cust9', 'contact', undefined, undefined)).toEqual([]);

    expect(await run()).toBe(`backfill-row-index on ${rows}: scanned 3, updated 3, already indexed 0`);
    expect(await stored.keys('Cust9', 'contact', undefined, undefined)).toEqual([1, 2, 3]);
    expect(await run()).toBe(`backfill-row-index on ${rows}: scanned 3, updated 0, already indexed 3`);
  });

  it('writes progress lines while it runs (one per page here)', async () => {
    const lines: string[] = [];
    const outputs = await readOutputs(clients, 'test');
    const summary = await backfillRowIndexOnStage(clients, outputs, {
      progress: (line) => lines.push(line),
      progressEveryMs: 0,
    });
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines)
      expect(line).toMatch(/^backfill-row-index: scanned \d+, updated 0, already indexed \d+ so far$/);
    expect(lines.at(-1)).toBe('backfill-row-index: scanned 3, updated 0, already indexed 3 so far');
    expect(summary).toMatch(/already indexed 3$/);
  });

  it('a stage without a stack is one line naming it and what to check', async () => {
    stack.on(DescribeStacksCommand).rejects(
      Object.assign(new Error('Stack with id crm-webhook-receiver-tset does not exist'), {
        name: 'ValidationError',
      }),
    );
    const error = await run('tset');
    expect(error).toBeInstanceOf(OpsError);
    expect((error as Error).message).toBe(
      'no stack crm-webhook-receiver-tset in eu-west-1: check --stage and the region (--region, AWS_REGION), or deploy the stage first',
    );
  });

  it('credentials without dynamodb:Scan are one line naming the permissions', async () => {
    const denied = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
    const mock = mockClient(denied);
    mock.on(ScanCommand).rejects(
      Object.assign(new Error('User is not authorized to perform: dynamodb:Scan'), {
        name: 'AccessDeniedException',
      }),
    );
    const error = await main(['backfill-row-index', '--stage', 'test'], { ...clients, dynamo: denied }).catch(
      (caught: unknown) => caught,
    );
    mock.restore();
    expect(error).toBeInstanceOf(OpsError);
    expect((error as Error).message).toBe(
      `not allowed on ${rows}: backfill-row-index needs dynamodb:Scan and dynamodb:UpdateItem on the rows table (docs/deploy.md, the ops permissions)`,
    );
  });

  it('missing credentials are the one line every command gives, exit 1', async () => {
    const cli = await runCli(
      'scripts/ops.ts',
      ['backfill-row-index', '--stage', 'dev', '--region', 'eu-west-1'],
      {
        HOME: '/nonexistent',
        AWS_PROFILE: undefined,
        AWS_ACCESS_KEY_ID: undefined,
        AWS_SECRET_ACCESS_KEY: undefined,
        AWS_SESSION_TOKEN: undefined,
        AWS_EC2_METADATA_DISABLED: 'true',
      },
    );
    expect(cli.code).toBe(1);
    expect(cli.errors).toEqual([expect.stringMatching(/^no AWS credentials: set AWS_PROFILE /)]);
  });
});
