import type { Message } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { fifoDeduplicationId, outgoingCopy } from '#transfer/message-transfer.js';

const opts = { key: 'k1', redriveId: 'inc-1', fifo: false, addPipelineAttributes: true };

describe('outgoing copy of a DLQ message', () => {
  it('increments redrive-count and replaces the previous run s redrive-id and idempotency-key', () => {
    const message: Message = {
      Body: 'b',
      MessageAttributes: {
        'redrive-count': { DataType: 'Number', StringValue: '2' },
        'redrive-id': { DataType: 'String', StringValue: 'inc-0' },
        tenant: { DataType: 'String.custom', StringValue: 'acme' },
      },
    };
    const out = outgoingCopy(message, opts);
    expect(out?.attributes).toEqual({
      tenant: { DataType: 'String.custom', StringValue: 'acme' },
      'redrive-count': { DataType: 'Number', StringValue: '3' },
      'redrive-id': { DataType: 'String', StringValue: 'inc-1' },
      'idempotency-key': { DataType: 'String', StringValue: 'k1' },
    });
  });

  it('leaves the message alone when SQS s 10-attribute limit leaves no room for the pipeline attributes', () => {
    const attributes = Object.fromEntries(
      Array.from({ length: 8 }, (_, i) => [`a${i}`, { DataType: 'String', StringValue: String(i) }]),
    );
    expect(outgoingCopy({ Body: 'b', MessageAttributes: attributes }, opts)).toBeUndefined();
  });

  it('C08 keeps the FIFO MessageGroupId and uses a deduplication id derived from the key', () => {
    const out = outgoingCopy(
      { Body: 'b', Attributes: { MessageGroupId: 'customer-42' } },
      { ...opts, fifo: true },
    );
    expect(out?.groupId).toBe('customer-42');
    expect(out?.deduplicationId).toBe(fifoDeduplicationId('k1'));
    expect(out?.deduplicationId).toMatch(/^[0-9a-f]{64}$/);
  });
});
