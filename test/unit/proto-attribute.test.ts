import type { Message } from '@aws-sdk/client-sqs';
import { recordKey, type SqsRecord } from '@dlq-redrive/consumer-idempotency';
import { describe, expect, it } from 'vitest';
import { outgoingCopy } from '#transfer/message-transfer.js';

// SQS accepts a message attribute named `__proto__`; the SDK parses it as an own key. A plain
// assignment would set the object's prototype instead and drop the attribute.
const protoAttributes = JSON.parse('{"__proto__": {"DataType": "String", "StringValue": "x"}}');

describe('a message attribute named __proto__', () => {
  it('is kept on the redriven copy and counted toward the 10-attribute limit', () => {
    const message: Message = { MessageId: 'm-1', Body: 'b', MessageAttributes: protoAttributes };
    const copy = outgoingCopy(message, {
      key: 'k',
      redriveId: 'r',
      fifo: false,
      addPipelineAttributes: true,
    });
    expect(Object.keys(copy?.attributes ?? {}).sort()).toEqual([
      '__proto__',
      'idempotency-key',
      'redrive-count',
      'redrive-id',
    ]);
    expect(Object.getPrototypeOf(copy?.attributes)).toBe(Object.prototype);
  });

  it('changes the consumer-side idempotency key (it is part of the message)', () => {
    const record = (attrs: SqsRecord['messageAttributes']): SqsRecord => ({
      messageId: 'm-1',
      body: 'b',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:orders',
      messageAttributes: attrs,
    });
    const withProto = recordKey(
      record(JSON.parse('{"__proto__": {"dataType": "String", "stringValue": "x"}}')),
    );
    expect(withProto.key).not.toBe(recordKey(record({})).key);
  });
});
