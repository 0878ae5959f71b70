/** A message as the SQS emulator holds it: what `peek` returns, and what the queue patch writes. */
export interface StoredMessage {
  messageId: string;
  body: string;
  inFlight: boolean;
  attributes: Record<string, string>;
  messageAttributes: Record<string, EmulatorMessageAttribute>;
}

export interface EmulatorMessageAttribute {
  DataType: string;
  StringValue?: string;
  BinaryValue?: string;
}
