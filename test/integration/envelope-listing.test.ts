/**
 * The projected envelope listing (functions/shared/inventory/envelope-listing.ts) on DynamoDB
 * Local: each reader gets exactly the fields it asks for of every envelope (and nothing of the
 * chunk items), the same values the full listing returns; the body only when asked; pages follow
 * what fits in 1 MB.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEnvelope } from '#inventory/envelope.js';
import {
  CANDIDATE_FIELDS,
  createEnvelopeListing,
  type EnvelopeField,
  nextPageLimit,
  PREFLIGHT_FIELDS,
} from '#inventory/envelope-listing.js';
import { createEnvelopeStore, type StoredEnvelope } from '#inventory/envelope-store.js';
import { documentClient } from '#platform/clients.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';

const DLQ = 'arn:aws:sqs:us-east-1:123456789012:listing-dlq';
const SOURCE = 'arn:aws:sqs:us-east-1:123456789012:listing-src';
const now = Date.now();

/** Six envelopes with every optional field some reader projects: SNS, pointer, chunked body, states. */
function writes() {
  const at = (i: number) => String(now - i * 1000);
  const messages = [
    {
      MessageId: 'm-plain',
      Body: '{"orderId":1}',
      Attributes: { SentTimestamp: at(1), DeadLetterQueueSourceArn: SOURCE },
    },
    {
      MessageId: 'm-poison',
      Body: 'not json',
      Attributes: { SentTimestamp: at(2), DeadLetterQueueSourceArn: SOURCE },
      MessageAttributes: { 'error-class': { DataType: 'String', StringValue: 'ValidationError' } },
    },
    { MessageId: 'm-no-source', Body: '{"orderId":3}', Attributes: { SentTimestamp: at(3) } },
    {
      MessageId: 'm-large',
      Body: `{"pad":"${'x'.repeat(200_000)}"}`,
      Attributes: { SentTimestamp: at(4), DeadLetterQueueSourceArn: SOURCE },
    },
    {
      MessageId: 'm-pointer',
      Body: JSON.stringify([
        'software.amazon.payloadoffloading.PayloadS3Pointer',
        { s3BucketName: 'b', s3Key: 'k' },
      ]),
      Attributes: { SentTimestamp: at(5), DeadLetterQueueSourceArn: SOURCE },
      MessageAttributes: { ExtendedPayloadSize: { DataType: 'Number', StringValue: '300000' } },
    },
    {
      MessageId: 'm-sns',
      Body: JSON.stringify({
        Type: 'Notification',
        MessageId: 'sns-1',
        TopicArn: 'arn:aws:sns:us-east-1:123456789012:orders',
        Message: '{"orderId":6}',
        MessageAttributes: { tenant: { Type: 'String', Value: 'acme' } },
      }),
      Attributes: { SentTimestamp: at(6) },
    },
  ];
  return messages.map((m) =>
    buildEnvelope(m, {
      dlqArn: DLQ,
      fifo: false,
      retentionPeriodSeconds: 345_600,
      now,
      registration: {},
      incidentId: 'inc-listing',
    }),
  );
}

/** The fields of `e` that are present, among `fields`. */
function pick(e: StoredEnvelope, fields: readonly EnvelopeField[]): Partial<StoredEnvelope> {
  return Object.fromEntries(fields.filter((f) => e[f] !== undefined).map((f) => [f, e[f]]));
}

describe('the projected envelope listing', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
    const store = createEnvelopeStore();
    const put = await store.putEnvelopes(writes(), { deadlineMs: 20_000 });
    expect(put.created).toBe(6);
    await store.setState(DLQ, 'm-poison', 'PARKED', 'classified poison: do not redrive (run inc-listing)');
    await store.markPayloadGone(DLQ, 'm-pointer', new Date(now).toISOString());
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("returns each envelope with exactly the reader's fields, as the full listing has them, and no chunk item", async () => {
    const full: StoredEnvelope[] = [];
    for await (const e of createEnvelopeStore().listEnvelopes(DLQ)) full.push(e);
    expect(full.map((e) => e.messageId).sort()).toEqual([
      'm-large',
      'm-no-source',
      'm-plain',
      'm-pointer',
      'm-poison',
      'm-sns',
    ]);
    for (const fields of [CANDIDATE_FIELDS, PREFLIGHT_FIELDS] as const) {
      const projected: Array<Partial<StoredEnvelope>> = [];
      for await (const e of createEnvelopeListing().listEnvelopes(DLQ, fields)) projected.push(e);
      // messageId and dlqArn always come back (they name an envelope in errors).
      const named = [...fields, 'dlqArn' as const];
      expect(projected).toEqual(full.map((e) => pick(e, named)));
    }
    const poison = full.find((e) => e.messageId === 'm-poison');
    expect([poison?.state, poison?.stateReason]).toEqual([
      'PARKED',
      'classified poison: do not redrive (run inc-listing)',
    ]);
    expect(full.find((e) => e.messageId === 'm-pointer')?.payloadGoneAt).toBeDefined();
    expect(full.find((e) => e.messageId === 'm-sns')?.sns?.messageAttributes).toBeDefined();
  });

  it('leaves the body out unless inlineBody is asked for, and then returns the inline bytes only', async () => {
    const bodies = new Map<string, string | undefined>();
    for await (const e of createEnvelopeListing().listEnvelopes(DLQ, PREFLIGHT_FIELDS))
      expect('inlineBody' in e).toBe(false);
    for await (const e of createEnvelopeListing().listEnvelopes(DLQ, ['inlineBody', 'bodyChunked']))
      bodies.set(e.messageId, e.inlineBody ? Buffer.from(e.inlineBody).toString('utf8') : undefined);
    expect(bodies.get('m-plain')).toBe('{"orderId":1}');
    // A chunked body is in its chunk items, not on the envelope item.
    expect(bodies.get('m-large')).toBeUndefined();
  });

  it('asks for the next page what fitted in the last one when 1 MB cut it, and doubles up to 1,000 when the limit did', () => {
    expect(nextPageLimit(250, 250)).toBe(500);
    expect(nextPageLimit(500, 500)).toBe(1000);
    expect(nextPageLimit(1000, 1000)).toBe(1000);
    // 64 KB bodies: 15 fit in 1 MB.
    expect(nextPageLimit(1000, 15)).toBe(15);
    expect(nextPageLimit(15, 15)).toBe(30);
    expect(nextPageLimit(250, 3)).toBe(10);
  });
  it("the store's own count and full listing page with a Limit across more than one page (linear on DynamoDB Local)", async () => {
    const DEEP = 'arn:aws:sqs:us-east-1:123456789012:listing-deep-dlq';
    const n = 1_205;
    const envelopes = Array.from({ length: n }, (_, i) =>
      buildEnvelope(
        {
          MessageId: `deep-${i}`,
          Body: `{"orderId":${i}}`,
          Attributes: { SentTimestamp: String(now - i), DeadLetterQueueSourceArn: SOURCE },
        },
        {
          dlqArn: DEEP,
          fifo: false,
          retentionPeriodSeconds: 345_600,
          now,
          registration: {},
          incidentId: 'inc-deep',
        },
      ),
    );
    const store = createEnvelopeStore();
    expect((await store.putEnvelopes(envelopes, { deadlineMs: 60_000 })).created).toBe(n);
    await store.setState(DEEP, 'deep-7', 'PARKED', 'classified poison: do not redrive (run inc-deep)');

    const queries: Array<{ Limit?: number; Select?: string }> = [];
    const client = documentClient();
    const spy = 'count-query-limits';
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'QueryCommand') queries.push(args.input as { Limit?: number });
        return next(args);
      },
      { step: 'initialize', name: spy },
    );
    try {
      expect(await store.countEnvelopes(DEEP, 'IN_DLQ')).toBe(n - 1);
      expect(await store.countEnvelopes(DEEP, 'PARKED')).toBe(1);
      let listed = 0;
      for await (const _ of store.listEnvelopes(DEEP)) listed += 1;
      expect(listed).toBe(n);
    } finally {
      client.middlewareStack.remove(spy);
    }
    // Two counts and one listing, each at least two pages of at most 1,000 items.
    expect(queries.length).toBeGreaterThanOrEqual(6);
    expect(queries.filter((q) => !(q.Limit !== undefined && q.Limit > 0 && q.Limit <= 1000))).toEqual([]);
  });
});
