import type { EmulatorMessageAttribute } from './sqs-message.js';

/* The internal shapes of local-aws-sqs 2.x (dist/index.js) that sqs-queue-patch.ts relies on. */
export interface EmulatorRecord {
  MessageId: string;
  ReceiptHandle: string;
  MessageBody: string;
  attributes: Record<string, string>;
  MessageAttributes?: Record<string, EmulatorMessageAttribute>;
  MD5OfMessageBody?: string;
  MD5OfMessageAttributes?: string;
}
export interface EmulatorEntry {
  visible: boolean;
  delayed: boolean;
  record: EmulatorRecord;
}
/** What SendMessage (or a SendMessageBatch entry) hands to setRecord; moves between queues too. */
export interface SendRequest {
  QueueUrl?: string;
  Id?: string;
  MessageGroupId?: string;
  MessageDeduplicationId?: string;
}
export interface ReceiveOptions {
  VisibilityTimeout?: number | string;
  WaitTimeSeconds?: number | string;
  MaxNumberOfMessages?: number | string;
}
export interface EmulatorQueue {
  QueueName: string;
  FifoQueue: boolean;
  VisibilityTimeout: number;
  DelaySeconds: number;
  ReceiveMessageWaitTimeSeconds: number;
  RedrivePolicy?: { maxReceiveCount: number | string };
  DeduplicationScope?: string;
  setRecord(request: SendRequest, messageId?: string): { record: EmulatorRecord };
  newRecord(record: EmulatorRecord, delaySeconds: number): EmulatorEntry;
  receive(options: ReceiveOptions): Promise<EmulatorRecord[]>;
  delete(receiptHandle: string): boolean;
  changeVisibility(receiptHandle: string, seconds: number): boolean;
  clearRecords(): void;
  getAttributes(names: string[]): Record<string, string> | undefined;
}
