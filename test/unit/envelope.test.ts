import type { Message } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { buildEnvelope, type EnvelopeContext } from '#inventory/envelope.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sha256Hex } from '#inventory/idempotency-key.js';

const DLQ = 'arn:aws:sqs:us-east-1:111122223333:orders-dlq';
const ctx: EnvelopeContext = {
  dlqArn: DLQ,
  fifo: false,
  retentionPeriodSeconds: 345_600,
  now: 1767350400000,
  registration: {},
};
const sqsAttributes = {
  DeadLetterQueueSourceArn: 'arn:aws:sqs:us-east-1:111122223333:orders-queue',
  SentTimestamp: '1767330000000',
  ApproximateReceiveCount: '4',
};

/** DynamoDB's item size: attribute names plus values (UTF-8 strings, raw binary, numbers ~ digits). */
function dynamoItemBytes(value: unknown): number {
  if (value instanceof Uint8Array) return value.byteLength;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return String(value).length;
  if (typeof value === 'boolean' || value === null) return 1;
  if (Array.isArray(value)) return 3 + value.reduce((n: number, v) => n + 1 + dynamoItemBytes(v), 0);
  if (typeof value === 'object')
    return (
      3 +
      Object.entries(value as Record<string, unknown>).reduce(
        (n, [k, v]) => n + 1 + Buffer.byteLength(k) + dynamoItemBytes(v),
        0,
      )
    );
  return 0;
}

/** A document client that accepts every write and records the items. */
function recordingClient() {
  const items: Array<Record<string, unknown>> = [];
  const client = {
    async send(command: { constructor: { name: string }; input: Record<string, unknown> }) {
      if (command.constructor.name === 'BatchGetCommand') return { Responses: {} };
      if (command.constructor.name === 'BatchWriteCommand') {
        const requests = Object.values(command.input.RequestItems as Record<string, unknown[]>)[0] as Array<{
          PutRequest: { Item: Record<string, unknown> };
        }>;
        items.push(...requests.map((r) => r.PutRequest.Item));
        return { UnprocessedItems: {} };
      }
      throw new Error(`unexpected ${command.constructor.name}`);
    },
  };
  return { items, client: client as unknown as DynamoDBDocumentClient };
}

describe('envelope builder', () => {
  it('C14 a 900 KiB body is stored whole in chunk items, each under 400 KB, with its SHA-256 and UTF-8 length', async () => {
    const body = `{"blob":"${'A'.repeat(921_000)}"}`;
    const write = buildEnvelope({ MessageId: 'm-1', Body: body, Attributes: sqsAttributes }, ctx);
    const { items, client } = recordingClient();

    const result = await createEnvelopeStore({ client, tableName: 't' }).putEnvelopes([write], {
      deadlineMs: 5_000,
    });

    expect(result).toMatchObject({ written: 1, unprocessed: 0 });
    expect(write.envelope).toMatchObject({ bodyChunked: true, bodyChunks: 3, bodyBytes: 921_011 });
    expect(write.envelope.bodySha256).toBe(sha256Hex(body));
    const chunks = items.filter((i) => i.entity === 'chunk');
    expect(chunks).toHaveLength(3);
    for (const item of items) expect(dynamoItemBytes(item)).toBeLessThan(400_000);
    const joined = Buffer.concat(chunks.map((c) => c.data as Uint8Array));
    expect(joined.toString('utf8')).toBe(body);
    expect(items.find((i) => i.entity === 'envelope')?.body).toBeUndefined();
  });

  it('C14 keeps a base64 body exactly, a Binary attribute as base64 with DataType Binary, and Number.int', () => {
    const message: Message = {
      MessageId: 'm-2',
      Body: 'H4sIAAAAAAAA/ytJLS4BAGVX8+8EAAAA',
      MessageAttributes: {
        'content-encoding': { StringValue: 'gzip+base64', DataType: 'String' },
        sig: { BinaryValue: Buffer.from('3q2+7w==', 'base64'), DataType: 'Binary' },
        retries: { StringValue: '3', DataType: 'Number.int' },
      },
      Attributes: sqsAttributes,
    };
    const { envelope, body } = buildEnvelope(message, ctx);
    expect(Buffer.from(body).toString('utf8')).toBe('H4sIAAAAAAAA/ytJLS4BAGVX8+8EAAAA');
    expect(envelope.messageAttributes).toEqual({
      'content-encoding': { dataType: 'String', stringValue: 'gzip+base64' },
      sig: { dataType: 'Binary', binaryValueBase64: '3q2+7w==' },
      retries: { dataType: 'Number.int', stringValue: '3' },
    });
    expect(envelope.bodyChunked).toBe(false);
  });

  it("C14 counts 'café – 😀' in UTF-8 bytes, not JS string length", () => {
    const text = 'café – 😀 emoji and accents';
    const { envelope, body } = buildEnvelope(
      { MessageId: 'm-3', Body: text, Attributes: sqsAttributes },
      ctx,
    );
    expect(text.length).toBe(27);
    expect(envelope.bodyBytes).toBe(32);
    expect(Buffer.from(body).toString('utf8')).toBe(text);
  });

  it('C12 recognises a non-raw SNS body: topic, SNS MessageId and attributes extracted, body untouched, key = SNS MessageId', () => {
    const body =
      '{"Type": "Notification", "MessageId": "9a1c7e55-0000-4000-8000-000000000001", "TopicArn": "arn:aws:sns:us-east-1:111122223333:order-events", "Subject": null, "Message": "{\\"orderId\\":\\"o-8\\",\\"status\\":\\"created\\"}", "Timestamp": "2026-01-02T08:00:00.000Z", "MessageAttributes": {"tenant": {"Type": "String", "Value": "acme"}, "traceparent": {"Type": "String", "Value": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}';
    const { envelope, body: bytes } = buildEnvelope(
      {
        MessageId: '55555555-0000-4000-8000-000000000001',
        Body: body,
        Attributes: sqsAttributes,
        MessageAttributes: {},
      },
      ctx,
    );
    expect(Buffer.from(bytes).toString('utf8')).toBe(body);
    expect(envelope.bodyFormat).toBe('sns-notification');
    expect(envelope.sns).toEqual({
      topicArn: 'arn:aws:sns:us-east-1:111122223333:order-events',
      messageId: '9a1c7e55-0000-4000-8000-000000000001',
      messageAttributes: {
        tenant: { dataType: 'String', stringValue: 'acme' },
        traceparent: {
          dataType: 'String',
          stringValue: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        },
      },
    });
    expect([envelope.idempotencyKey, envelope.keySource]).toEqual([
      '9a1c7e55-0000-4000-8000-000000000001',
      'snsMessageId',
    ]);
    expect(envelope.messageAttributes).toEqual({});
  });

  it('C12 a raw-delivery body takes its attributes from the SQS message attributes', () => {
    const { envelope } = buildEnvelope(
      {
        MessageId: '55555555-0000-4000-8000-000000000002',
        Body: '{"orderId":"o-8","status":"created"}',
        Attributes: sqsAttributes,
        MessageAttributes: { tenant: { StringValue: 'acme', DataType: 'String' } },
      },
      ctx,
    );
    expect(envelope.bodyFormat).toBe('raw');
    expect(envelope.sns).toBeUndefined();
    expect(envelope.messageAttributes).toEqual({ tenant: { dataType: 'String', stringValue: 'acme' } });
    expect(envelope.keySource).toBe('hash');
  });

  it('reads the failure reason from consumer attributes and fingerprints it without ids', () => {
    const { envelope } = buildEnvelope(
      {
        MessageId: 'm-5',
        Body: '{}',
        Attributes: sqsAttributes,
        MessageAttributes: {
          'x-error-class': { DataType: 'String', StringValue: 'TimeoutError' },
          'x-error-message': { DataType: 'String', StringValue: 'db timed out after 3000 ms' },
        },
      },
      ctx,
    );
    expect(envelope.failure).toEqual({
      errorClass: 'TimeoutError',
      errorMessage: 'db timed out after 3000 ms',
      fingerprint: 'TimeoutError|db timed out after # ms',
    });
    expect(envelope.classification).toBe('transient');
    expect(envelope.retentionDeadline).toBe(1767330000000 + 345_600_000);
  });

  it('C14 a message whose attributes alone would pass 400 KB keeps its envelope (values cut, flagged) without failing the others', async () => {
    const huge = buildEnvelope(
      {
        MessageId: 'm-huge',
        Body: '{}',
        Attributes: sqsAttributes,
        MessageAttributes: {
          trace: { DataType: 'String', StringValue: 'x'.repeat(600_000) },
          tenant: { DataType: 'String', StringValue: 'acme' },
        },
      },
      ctx,
    );
    const small = buildEnvelope(
      { MessageId: 'm-small', Body: '{"ok":true}', Attributes: sqsAttributes },
      ctx,
    );
    const { items, client } = recordingClient();

    const result = await createEnvelopeStore({ client, tableName: 't' }).putEnvelopes([huge, small], {
      deadlineMs: 5_000,
    });

    expect(result).toMatchObject({ written: 2, unprocessed: 0 });
    const stored = items.find((i) => i.messageId === 'm-huge') as Record<string, unknown>;
    expect(dynamoItemBytes(stored)).toBeLessThan(400_000);
    expect(stored.messageAttributes).toEqual({
      trace: { dataType: 'String', stringValue: 'x'.repeat(1024) },
      tenant: { dataType: 'String', stringValue: 'acme' },
    });
    expect((stored.attributesTruncated as { keptCharsPerValue: number }).keptCharsPerValue).toBe(1024);
    expect(items.find((i) => i.messageId === 'm-small')?.attributesTruncated).toBeUndefined();
  });

  it('C14 a 300 KB error-message and a 100 KB error-class keep the envelope under 400 KB: the failure fields are cut, messages still group by cause', async () => {
    const failing = (id: string, tail: string) =>
      buildEnvelope(
        {
          MessageId: id,
          Body: 'b'.repeat(60_000),
          Attributes: sqsAttributes,
          MessageAttributes: {
            'error-message': {
              DataType: 'String',
              StringValue: `${'stack frame at line 12\n'.repeat(12_500)}${tail}`,
            },
            'error-class': {
              DataType: 'String',
              StringValue: `com.example.${'Nested'.repeat(16_000)}Exception`,
            },
          },
        },
        ctx,
      );
    const a = failing('m-a', 'end a');
    const b = failing('m-b', 'end b');
    const { items, client } = recordingClient();

    const result = await createEnvelopeStore({ client, tableName: 't' }).putEnvelopes([a, b], {
      deadlineMs: 5_000,
    });

    expect(result).toMatchObject({ written: 2, unprocessed: 0 });
    for (const item of items.filter((i) => i.entity !== 'chunk'))
      expect(dynamoItemBytes(item), String(item.messageId)).toBeLessThan(400_000);
    expect((a.envelope.failure.errorMessage ?? '').length).toBeLessThanOrEqual(4096);
    expect((a.envelope.failure.errorClass ?? '').length).toBeLessThanOrEqual(256);
    expect(a.envelope.failure.fingerprint.length).toBeLessThanOrEqual(4096 + 256 + 1);
    expect(a.envelope.failure.fingerprint).toBe(b.envelope.failure.fingerprint);
  });

  it('a producer id or pipeline key longer than 256 characters is replaced by its SHA-256, so it fits a DynamoDB key (2048 bytes)', () => {
    const longId = `order-${'9'.repeat(5_000)}`;
    const built = buildEnvelope(
      { MessageId: 'm-long', Body: JSON.stringify({ orderId: longId }), Attributes: sqsAttributes },
      { ...ctx, registration: { producerKey: { jsonPath: '$.orderId' } } },
    );
    const piped = buildEnvelope(
      {
        MessageId: 'm-piped',
        Body: '{}',
        Attributes: sqsAttributes,
        MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: 'k'.repeat(3_000) } },
      },
      ctx,
    );
    const short = buildEnvelope(
      { MessageId: 'm-short', Body: JSON.stringify({ orderId: 'o-1' }), Attributes: sqsAttributes },
      { ...ctx, registration: { producerKey: { jsonPath: '$.orderId' } } },
    );

    expect([built.envelope.keySource, built.envelope.idempotencyKey]).toEqual([
      'jsonPath',
      `sha256:${sha256Hex(longId)}`,
    ]);
    expect(piped.envelope.idempotencyKey).toBe(`sha256:${sha256Hex('k'.repeat(3_000))}`);
    expect(short.envelope.idempotencyKey).toBe('o-1');
  });

  it('cut values never end in half of a surrogate pair (an emoji at the cut is dropped whole)', () => {
    const built = buildEnvelope(
      {
        MessageId: 'm-emoji',
        Body: '{}',
        Attributes: sqsAttributes,
        MessageAttributes: {
          'error-message': { DataType: 'String', StringValue: `${'e'.repeat(4095)}\u{1F600}tail` },
        },
      },
      ctx,
    );
    expect(built.envelope.failure.errorMessage).toBe('e'.repeat(4095));
  });
});

describe('envelope lifetime (TTL)', () => {
  it('an envelope and its body chunks expire 14 days after the message’s retention deadline, whatever its state', async () => {
    const { envelopeItem, chunkItems, ENVELOPE_TTL_GRACE_SECONDS } = await import(
      '#inventory/envelope-items.js'
    );
    const deadline = Date.UTC(2026, 0, 16, 10, 35, 0, 250);
    const body = new Uint8Array(700 * 1024);
    const envelope = {
      dlqArn: 'arn:aws:sqs:us-east-1:111122223333:orders-dlq',
      messageId: 'm-1',
      idempotencyKey: 'k-1',
      retentionDeadline: deadline,
      bodyChunked: true,
      bodyChunks: 3,
      messageAttributes: {},
    } as unknown as Parameters<typeof envelopeItem>[0]['envelope'];
    const ttl = Math.ceil(deadline / 1000) + 14 * 86_400;
    expect(ENVELOPE_TTL_GRACE_SECONDS).toBe(1_209_600);
    expect(envelopeItem({ envelope, body }).expiresAt).toBe(ttl);
    expect(chunkItems({ envelope, body }).map((c) => c.expiresAt)).toEqual([ttl, ttl, ttl]);
  });
});
