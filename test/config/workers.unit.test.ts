import { describe, expect, it } from 'vitest';
import { readRowWorkerConfig, readStateWorkerConfig } from '../../lib/config/workers.js';

const tables = { ROWS_TABLE: 'rows', EVENTS_TABLE: 'events', WEBHOOKS_TABLE: 'webhooks' };

describe('worker configuration', () => {
  it('reads tables, defaults retention to 30 days and parses the echo associates', () => {
    expect(readRowWorkerConfig({ ...tables, IGNORE_ASSOCIATE_IDS: ' 7, 12 ,,' })).toEqual({
      tables: { rows: 'rows', events: 'events', webhooks: 'webhooks' },
      retentionDays: 30,
      ignoreAssociateIds: new Set([7, 12]),
      erasesOnDelete: expect.any(Function),
    });
    expect(readRowWorkerConfig({ ...tables, EVENT_RETENTION_DAYS: '90' }).retentionDays).toBe(90);
  });

  it('names the variable that is missing or malformed', () => {
    expect(() => readRowWorkerConfig({ ...tables, WEBHOOKS_TABLE: undefined })).toThrow(
      'WEBHOOKS_TABLE must be set',
    );
    expect(() => readRowWorkerConfig({ ...tables, IGNORE_ASSOCIATE_IDS: '7,abc' })).toThrow(
      /IGNORE_ASSOCIATE_IDS/,
    );
    expect(() => readRowWorkerConfig({ ...tables, EVENT_RETENTION_DAYS: '0' })).toThrow(
      /EVENT_RETENTION_DAYS/,
    );
  });

  it('the state worker needs only the webhooks table; the alert topic is optional', () => {
    expect(readStateWorkerConfig({ WEBHOOKS_TABLE: 'w' })).toEqual({
      webhooksTable: 'w',
      alertTopicArn: undefined,
    });
    expect(
      readStateWorkerConfig({ WEBHOOKS_TABLE: 'w', ALERT_TOPIC_ARN: 'arn:aws:sns:x' }).alertTopicArn,
    ).toBe('arn:aws:sns:x');
  });
});
