import { tableOutput } from '../../infra/definitions.js';
import { type BackfillCounts, backfillRowIndex } from '../../lib/store/index.js';
import { type OpsClients, OpsError, output, type StackOutputs } from './commands.js';

export interface BackfillOptions {
  /** Where the progress lines go (standard error in the CLI). */
  progress: (line: string) => void;
  /** At most one progress line this often (default 5 s); 0 prints one per page. */
  progressEveryMs?: number;
}

const counted = ({ scanned, updated, alreadyIndexed }: BackfillCounts) =>
  `scanned ${scanned}, updated ${updated}, already indexed ${alreadyIndexed}`;

/**
 * `npm run ops -- backfill-row-index`: once per stage after deploying the version with the rows table's
 * `byRowSet` index, gives the rows stored before it the index's keys (lib/store/row-index-backfill.ts),
 * so reconciliation finds those the CRM deleted. Idempotent: interrupted, run it again. Answers one line.
 */
export async function backfillRowIndexOnStage(
  clients: OpsClients,
  outputs: StackOutputs,
  options: BackfillOptions,
): Promise<string> {
  const table = output(outputs, tableOutput('rows'));
  const every = options.progressEveryMs ?? 5000;
  let last = Date.now();
  try {
    const counts = await backfillRowIndex({
      client: clients.dynamo,
      table,
      onProgress: (so) => {
        if (Date.now() - last < every) return;
        last = Date.now();
        options.progress(`backfill-row-index: ${counted(so)} so far`);
      },
    });
    return `backfill-row-index on ${table}: ${counted(counts)}`;
  } catch (error) {
    if (error instanceof Error && error.name === 'AccessDeniedException')
      throw new OpsError(
        `not allowed on ${table}: backfill-row-index needs dynamodb:Scan and dynamodb:UpdateItem on the rows table (docs/deploy.md, the ops permissions)`,
        { cause: error },
      );
    throw error;
  }
}
