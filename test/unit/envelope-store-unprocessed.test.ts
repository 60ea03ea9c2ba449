import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { buildEnvelope, type EnvelopeWrite } from '#inventory/envelope.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';

const TABLE = 'dlq-envelopes';
type PutRequest = { PutRequest: { Item: Record<string, unknown> } };

function writes(n: number): EnvelopeWrite[] {
  return Array.from({ length: n }, (_, i) =>
    buildEnvelope(
      { MessageId: `m-${i + 1}`, Body: `{"n":${i + 1}}`, Attributes: { SentTimestamp: '1767330000000' } },
      {
        dlqArn: 'arn:aws:sqs:us-east-1:111122223333:orders-dlq',
        fifo: false,
        retentionPeriodSeconds: 345_600,
        now: 1767350400000,
        registration: {},
      },
    ),
  );
}

/**
 * A client mock for the rare path: BatchWriteItem answers HTTP 200 with UnprocessedItems (C22).
 * `plan[i]` lists the MessageIds left unprocessed by the i-th BatchWriteItem call.
 */
function throttlingClient(plan: string[][]) {
  const stored = new Set<string>();
  let call = 0;
  const client = {
    async send(command: { constructor: { name: string }; input: Record<string, unknown> }) {
      if (command.constructor.name === 'BatchGetCommand') return { Responses: { [TABLE]: [] } };
      if (command.constructor.name !== 'BatchWriteCommand') throw new Error(command.constructor.name);
      const requests = (command.input.RequestItems as Record<string, PutRequest[]>)[TABLE] ?? [];
      const left = new Set(plan[call++] ?? []);
      const unprocessed = requests.filter((r) => left.has(String(r.PutRequest.Item.messageId)));
      for (const r of requests)
        if (!left.has(String(r.PutRequest.Item.messageId))) stored.add(String(r.PutRequest.Item.messageId));
      return { UnprocessedItems: unprocessed.length > 0 ? { [TABLE]: unprocessed } : {} };
    },
  };
  return { client: client as unknown as DynamoDBDocumentClient, stored, calls: () => call };
}

describe('envelope store: UnprocessedItems', () => {
  it('C22 re-sends unprocessed items with backoff until all 60 envelopes are written', async () => {
    // The case's sequence: 2 left, none, none, 1 left on the retry, none.
    const mock = throttlingClient([['m-17', 'm-18'], [], [], ['m-17'], []]);
    const store = createEnvelopeStore({
      client: mock.client,
      tableName: TABLE,
      concurrency: 1,
      backoff: { baseMs: 1, maxMs: 5 },
    });

    const result = await store.putEnvelopes(writes(60), { deadlineMs: Date.now() + 5_000 });

    expect(result).toEqual({
      written: 60,
      unprocessed: 0,
      created: 60,
      unprocessedMessageIds: [],
      duplicates: 0,
      createdMessageIds: expect.any(Array),
      duplicateMessageIds: [],
    });
    expect(new Set(result.createdMessageIds).size).toBe(60);
    expect(mock.stored.size).toBe(60);
    expect(mock.calls()).toBe(5);
  });

  it("C22 reports 'wrote 58/60' with the 2 unprocessed ids when the deadline passes", async () => {
    const always = Array.from({ length: 1000 }, (_, i) =>
      i === 0 ? ['m-17', 'm-18'] : i < 3 ? [] : ['m-17', 'm-18'],
    );
    const mock = throttlingClient(always);
    const store = createEnvelopeStore({
      client: mock.client,
      tableName: TABLE,
      concurrency: 1,
      backoff: { baseMs: 1, maxMs: 5 },
    });

    const result = await store.putEnvelopes(writes(60), { deadlineMs: Date.now() + 200 });

    expect(result.written).toBe(58);
    expect(result.unprocessed).toBe(2);
    expect(result.unprocessedMessageIds.sort()).toEqual(['m-17', 'm-18']);
    expect(`wrote ${result.written}/60 envelopes, ${result.unprocessed} unprocessed`).toBe(
      'wrote 58/60 envelopes, 2 unprocessed',
    );
  });
});
