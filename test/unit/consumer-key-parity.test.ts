import { readFileSync } from 'node:fs';
import type { Message } from '@aws-sdk/client-sqs';
import { recordKey } from '@dlq-redrive/consumer-idempotency';
import { describe, expect, it } from 'vitest';
import { buildEnvelope, type EnvelopeContext } from '#inventory/envelope.js';
import type { QueueRegistration } from '#inventory/model.js';
import { outgoingCopy } from '#transfer/message-transfer.js';
import { sqsRecordOf } from '../../local/sqs-event.js';

const SOURCE = 'arn:aws:sqs:us-east-1:111122223333:order-events-sub';
const c12 = JSON.parse(
  readFileSync(
    new URL('../../../shared/cases/C12-sns-to-sqs-raw-vs-non-raw-delivery.json', import.meta.url),
    'utf8',
  ),
) as { input: { non_raw_dlq_message: Message; raw_dlq_message: Message } };

/** Messages as the producer sent them, with where their producer id lives (if anywhere). */
const messages: Array<{ name: string; message: Message; producerKey?: QueueRegistration['producerKey'] }> = [
  {
    name: 'plain body and attributes, binary included (content hash)',
    message: {
      Body: '{"sku":"x-1","qty":2}',
      MessageAttributes: {
        tenant: { DataType: 'String', StringValue: 'acme' },
        blob: { DataType: 'Binary', BinaryValue: new Uint8Array([0, 255, 7]) },
      },
    },
  },
  {
    name: 'an attribute named __proto__ (content hash)',
    message: {
      Body: 'b',
      MessageAttributes: JSON.parse('{"__proto__":{"DataType":"String","StringValue":"x"}}'),
    },
  },
  {
    name: 'producer id in the body',
    message: { Body: '{"orderId":"o-9"}' },
    producerKey: { jsonPath: '$.orderId' },
  },
  {
    name: 'producer id in an attribute',
    message: { Body: 'x', MessageAttributes: { 'order-id': { DataType: 'String', StringValue: 'o-10' } } },
    producerKey: { attribute: 'order-id' },
  },
  { name: 'non-raw SNS notification (C12)', message: { Body: c12.input.non_raw_dlq_message.Body } },
  {
    name: 'raw SNS delivery (C12)',
    message: {
      Body: c12.input.raw_dlq_message.Body,
      MessageAttributes: { tenant: { DataType: 'String', StringValue: 'acme' } },
    },
  },
  {
    name: 'an EventBridge event delivered to a queue target (its content, not its id)',
    message: {
      Body: JSON.stringify({
        version: '0',
        id: '6f2e1c1a-0000-4000-8000-000000000001',
        'detail-type': 'OrderPlaced',
        source: 'com.example.orders',
        account: '111122223333',
        time: '2026-01-02T08:00:00Z',
        region: 'us-east-1',
        resources: [],
        detail: { orderId: 'o-11' },
      }),
    },
  },
];

function envelopeKey(message: Message, producerKey: QueueRegistration['producerKey'] | undefined) {
  const ctx: EnvelopeContext = {
    dlqArn: 'arn:aws:sqs:us-east-1:111122223333:order-events-dlq',
    fifo: false,
    retentionPeriodSeconds: 1_209_600,
    now: Date.now(),
    registration: producerKey ? { producerKey } : {},
  };
  // The same message as it sits in the DLQ: DeadLetterQueueSourceArn names the consumed queue.
  const inDlq = { ...message, MessageId: 'dlq-1', Attributes: { DeadLetterQueueSourceArn: SOURCE } };
  return buildEnvelope(inDlq, ctx).envelope;
}

describe('the consumer package derives the keys the pipeline gives envelopes', () => {
  for (const { name, message, producerKey } of messages) {
    it(`gives a consumed message the key triage gave its DLQ envelope, and the redriven copy the same key: ${name}`, () => {
      const envelope = envelopeKey(message, producerKey);
      const consumed = recordKey(sqsRecordOf({ ...message, MessageId: 'm-1' }, SOURCE), producerKey);
      expect(consumed.key).toBe(envelope.idempotencyKey);
      expect(consumed.keySource).toBe(envelope.keySource);

      const copy = outgoingCopy(
        { ...message, MessageId: 'dlq-1' },
        { key: envelope.idempotencyKey, redriveId: 'inc-7', fifo: false, addPipelineAttributes: true },
      );
      const redriven = recordKey(
        sqsRecordOf(
          { MessageId: 'm-2', Body: copy?.body ?? '', MessageAttributes: copy?.attributes ?? {} },
          SOURCE,
        ),
        producerKey,
      );
      expect(redriven.key).toBe(envelope.idempotencyKey);
      // A content hash is limited to the run that sent the copy; an explicit key names the message.
      expect(redriven.lineage).toBe(envelope.keySource === 'hash' ? 'RUN#inc-7' : null);
    });
  }

  it('gives an SNS republish of a non-raw notification, which SNS gives a new MessageId, the key of the original (C12)', () => {
    const envelope = envelopeKey({ Body: c12.input.non_raw_dlq_message.Body }, undefined);
    // The mover publishes the payload with idempotency-key as an SNS message attribute; SNS wraps it
    // in a new notification with a new MessageId and the attribute inside the body.
    const republished = JSON.parse(c12.input.non_raw_dlq_message.Body as string) as Record<string, unknown>;
    republished.MessageId = '9a1c7e55-0000-4000-8000-00000000beef';
    republished.MessageAttributes = {
      ...(republished.MessageAttributes as object),
      'idempotency-key': { Type: 'String', Value: envelope.idempotencyKey },
    };
    const consumed = recordKey(sqsRecordOf({ MessageId: 'm-3', Body: JSON.stringify(republished) }, SOURCE));
    expect([consumed.key, consumed.lineage]).toEqual(['9a1c7e55-0000-4000-8000-000000000001', null]);
  });

  it('gives an EventBridge event put again (a new id) the key of the original', () => {
    const event = JSON.parse(messages.at(-1)?.message.Body as string) as Record<string, unknown>;
    const original = recordKey(sqsRecordOf({ MessageId: 'm-4', Body: JSON.stringify(event) }, SOURCE));
    const again = recordKey(
      sqsRecordOf({ MessageId: 'm-5', Body: JSON.stringify({ ...event, id: 'another-id' }) }, SOURCE),
    );
    const otherDetail = recordKey(
      sqsRecordOf(
        { MessageId: 'm-6', Body: JSON.stringify({ ...event, detail: { orderId: 'o-12' } }) },
        SOURCE,
      ),
    );
    expect([again.key, again.keySource, again.lineage]).toEqual([original.key, 'eventContent', null]);
    expect(otherDetail.key).not.toBe(original.key);
  });
});
