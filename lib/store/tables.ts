/**
 * The DynamoDB tables, each with the environment variable that carries its name to the functions: the
 * one list of tables, beside the queues' (`QUEUE_ENV_VARS`, lib/queue/port.ts). infra/definitions.ts
 * maps each key to its `<Key>Table` of infra/resources.yml; the workers' config reads these variables.
 */
export const TABLE_ENV_VARS = {
  rows: 'ROWS_TABLE',
  events: 'EVENTS_TABLE',
  webhooks: 'WEBHOOKS_TABLE',
} as const;

export type TableKey = keyof typeof TABLE_ENV_VARS;

export const TABLE_KEYS = Object.keys(TABLE_ENV_VARS) as TableKey[];
