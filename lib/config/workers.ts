import { TABLE_ENV_VARS } from '../store/tables.js';
import { ConfigError, intEnv, listEnv, optionalEnv, requireEnv } from './env.js';
import { erasesOnDelete } from './erasure.js';

type Env = Record<string, string | undefined>;

export interface RowWorkerConfig {
  tables: { rows: string; events: string; webhooks: string };
  /** EVENT_RETENTION_DAYS, default 30. */
  retentionDays: number;
  /** IGNORE_ASSOCIATE_IDS: comma-separated associate ids whose changes are echoes. */
  ignoreAssociateIds: ReadonlySet<number>;
  /** ERASE_ON_DELETE: the entities whose rows are erased on a hard delete (lib/config/erasure.ts). */
  erasesOnDelete: (entity: string) => boolean;
}

export interface StateWorkerConfig {
  webhooksTable: string;
  /** ALERT_TOPIC_ARN; without it alerts are only logged and counted. */
  alertTopicArn: string | undefined;
}

/**
 * The contact and activity workers' environment, read once. WEBHOOKS_TABLE is needed too: the row
 * workers keep each context's last accepted event there, where a gap window starts.
 */
export function readRowWorkerConfig(env: Env = process.env): RowWorkerConfig {
  return {
    tables: {
      rows: requireEnv(TABLE_ENV_VARS.rows, env),
      events: requireEnv(TABLE_ENV_VARS.events, env),
      webhooks: requireEnv(TABLE_ENV_VARS.webhooks, env),
    },
    retentionDays: intEnv('EVENT_RETENTION_DAYS', 30, env),
    ignoreAssociateIds: new Set(listEnv('IGNORE_ASSOCIATE_IDS', env).map(associateId)),
    erasesOnDelete: erasesOnDelete(env),
  };
}

/** The webhook-state worker's environment, read once. */
export function readStateWorkerConfig(env: Env = process.env): StateWorkerConfig {
  return {
    webhooksTable: requireEnv(TABLE_ENV_VARS.webhooks, env),
    alertTopicArn: optionalEnv('ALERT_TOPIC_ARN', env),
  };
}

function associateId(value: string): number {
  const id = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(id)) {
    throw new ConfigError(
      'IGNORE_ASSOCIATE_IDS must be comma-separated associate ids',
      'IGNORE_ASSOCIATE_IDS',
    );
  }
  return id;
}
