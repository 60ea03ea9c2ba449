import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { consumerIdempotency, createProcessedKeyStore } from '@dlq-redrive/consumer-idempotency';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqsClient } from '#platform/clients.js';
import { sleep } from '#platform/sleep.js';
import { handler as sampleHandler } from '../../functions/sample-redrive/handler.js';
import type { SampleRedriveResult } from '../../functions/sample-redrive/sample-redrive.js';
import { createVerifySampleDeps } from '../../functions/verify-sample/deps.js';
import { handler as verifyHandler } from '../../functions/verify-sample/handler.js';
import {
  VerifySampleInput,
  type VerifySampleResult,
  verifySample,
} from '../../functions/verify-sample/verify-sample.js';
import { lambdaContext as consumerContext } from '../../local/lambda-context.js';
import { sqsRecordOf } from '../../local/sqs-event.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { createQueue, lambdaContext, planFor, seedAndInventory } from '../support/redrive-fixtures.js';
import { queueDepth } from '../support/seed-dlq.js';

const sample = (event: unknown) =>
  sampleHandler(event as never, lambdaContext) as Promise<SampleRedriveResult>;
const verify = (event: unknown) =>
  verifyHandler(event as never, lambdaContext) as Promise<VerifySampleResult>;
/** The core with a peek budget of `maxMessages` (a stand-in for a DLQ deeper than 10,000). */
const verifyWithBudget = (input: unknown, maxMessages: number) =>
  verifySample(VerifySampleInput.parse(input), createVerifySampleDeps({ overrides: { maxMessages } }));
const backlog = (n: number) => Array.from({ length: n }, (_, i) => ({ body: `backlog-${i}` }));

/**
 * A consumer of the source queue behind the consumer package's middleware: processes what `ok`
 * accepts (deleted, its key recorded as processed by the middleware) and fails the rest, which SQS
 * dead-letters after maxReceiveCount receives.
 */
async function consume(tableName: string, url: string, ok: (body: string) => boolean): Promise<void> {
  const arn = `arn:aws:sqs:us-east-1:123456789012:${url.split('/').pop()}`;
  const handler = middy<SQSEvent, SQSBatchResponse>()
    .use(consumerIdempotency({ consumer: 'orders-consumer', tableName }))
    .handler(async (event) => ({
      batchItemFailures: event.Records.filter((r) => !ok(r.body)).map((r) => ({
        itemIdentifier: r.messageId,
      })),
    }));
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const depth = await queueDepth(sqsClient(), url);
    if (depth.visible + depth.inFlight === 0) return;
    // VisibilityTimeout 1 s: with 0 the local SQS hands the same message out several times in one
    // receive and dead-letters it at once. Failed records come back after it.
    const out = await sqsClient().send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 1,
        MessageAttributeNames: ['All'],
        AttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const messages = out.Messages ?? [];
    if (messages.length > 0) {
      const response = await handler(
        { Records: messages.map((m) => sqsRecordOf(m, arn)) },
        consumerContext({ functionName: 'OrdersConsumer' }),
      );
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      for (const m of messages.filter((m) => !failed.has(m.MessageId as string)))
        await sqsClient().send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
    }
    await sleep(100);
  }
  throw new Error(`consume: ${url} did not drain`);
}

describe('VerifySample against the local stack', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('fails when a sample comes back to the DLQ within the window, naming its key and counting the processed one', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'vs-fail-dlq',
      sourceNames: ['vs-fail-src'],
      messages: [{ body: 'still-broken' }, { body: 'fixed' }, { body: 'rest-1' }],
      incidentId: 'inc-vs-fail',
    });
    const plan = planFor(dlq, { sampleSize: 2 });
    const sent = await sample({ plan, preflight: { verifyWindowSeconds: 0, fifo: false } });
    expect(sent.keys).toHaveLength(2);
    await consume(stack.tableName, dlq.sources[0]?.url as string, (body) => body !== 'still-broken');
    const result = await verify({ plan, sample: sent });
    expect(result.verdict).toBe('fail');
    expect(result.returned).toHaveLength(1);
    expect(sent.keys).toContain(result.returned[0]);
    expect([result.processed, result.unknown]).toEqual([1, 0]);
    expect(result.reason).toContain('1 of 2 sample message(s) came back to the DLQ');
  });

  it('passes when no sample came back, counting the samples consumers recorded as processed', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'vs-pass-dlq',
      sourceNames: ['vs-pass-src'],
      messages: [{ body: 'a' }, { body: 'b' }, { body: 'c' }],
      incidentId: 'inc-vs-pass',
    });
    const plan = planFor(dlq, { sampleSize: 2 });
    const sent = await sample({ plan, preflight: { verifyWindowSeconds: 0, fifo: false } });
    await consume(stack.tableName, dlq.sources[0]?.url as string, () => true);
    const result = await verify({ plan, sample: sent });
    expect([result.verdict, result.returned, result.processed, result.unknown]).toEqual(['pass', [], 2, 0]);
  });

  it("counts a content-hash sample as processed only when this run's copy was, not another message with the same body", async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'vs-lineage-dlq',
      sourceNames: ['vs-lineage-src'],
      messages: [{ body: 'same-1' }, { body: 'same-2' }],
      incidentId: 'inc-vs-lineage',
    });
    const plan = planFor(dlq, { sampleSize: 2 });
    const sent = await sample({ plan, preflight: { verifyWindowSeconds: 0, fifo: false } });
    const [other, copy] = sent.keys as [string, string];
    // No consumer ran; records of the same content hashes exist: one from a different message
    // (lineage MSG#...), one from this run's copy (RUN#<redriveId>).
    const store = createProcessedKeyStore({ tableName: stack.tableName });
    const now = Math.floor(Date.now() / 1000);
    for (const [key, lineage] of [
      [other, 'MSG#another-message'],
      [copy, `RUN#${sent.redriveId}`],
    ] as const) {
      const claim = {
        consumer: 'orders-consumer',
        key,
        keySource: 'hash',
        lineage,
        messageId: 'm',
        token: key,
        until: now + 60,
      } as const;
      expect(await store.claim(claim, now)).toEqual({ status: 'claimed' });
      await store.complete(claim, new Date(), now + 3600);
    }
    const result = await verify({ plan, sample: sent });
    expect([result.verdict, result.returned, result.processed, result.unknown]).toEqual(['pass', [], 1, 1]);
  });

  it('fails when no sample could be sent although messages remain', async () => {
    const url = await createQueue(sqsClient(), 'vs-none-dlq');
    await sqsClient().send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'orphan' }));
    const plan = planFor({
      dlqArn: 'arn:aws:sqs:us-east-1:123456789012:vs-none-dlq',
      dlqUrl: url,
      incidentId: 'i',
    });
    const result = await verify({
      plan,
      sample: { redriveId: 'i', sent: 0, alreadySent: 0, keys: [], verifyAfterSeconds: 0 },
    });
    expect(result.verdict).toBe('fail');
    expect(result.reason).toContain('no sample message could be sent although 1 message(s) remain');
  });
  it('is inconclusive, never pass, when the peek stops on its budget before the returned sample (N12)', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'vs-n12-dlq',
      sourceNames: ['vs-n12-src'],
      messages: backlog(40),
      incidentId: 'inc-vs-n12',
    });
    const plan = planFor(dlq, { sampleSize: 1 });
    const sent = await sample({ plan, preflight: { verifyWindowSeconds: 0, fifo: false } });
    expect(sent.keys).toHaveLength(1);
    // The consumer still fails: the sample goes back to the DLQ, behind the 39-message backlog.
    await consume(stack.tableName, dlq.sources[0]?.url as string, () => false);
    const first = await verifyWithBudget({ plan, sample: sent }, 20);
    expect([first.verdict, first.peeked, first.dlqDepth, first.attempt]).toEqual(['inconclusive', 20, 40, 1]);
    expect(first.retryAfterSeconds).toBeGreaterThan(0);
    expect(first.reason).toContain('the peek saw 20 of 40 DLQ message(s) (stopped on its budget of 20)');
    // The last attempt allowed ends fail with the reason: the workflow never bulk-moves on it.
    const last = await verifyWithBudget({ plan, sample: sent, previous: { attempt: 2 } }, 20);
    expect([last.verdict, last.attempt, last.maxAttempts]).toEqual(['fail', 3, 3]);
    expect(last.reason).toContain('sample not verified after 3 attempt(s)');
    // With a budget that reaches the back of the DLQ, the same check finds it.
    const whole = await verifyWithBudget({ plan, sample: sent }, 100);
    expect([whole.verdict, whole.returned]).toEqual(['fail', sent.keys]);
  });

  it('looks up the envelopes of the peeked messages a hundred per call, and still finds the returned sample behind them', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'vs-batched-dlq',
      sourceNames: ['vs-batched-src'],
      messages: backlog(230),
      incidentId: 'inc-vs-batched',
    });
    const plan = planFor(dlq, { sampleSize: 1 });
    const sent = await sample({ plan, preflight: { verifyWindowSeconds: 0, fifo: false } });
    await consume(stack.tableName, dlq.sources[0]?.url as string, () => false);
    const deps = createVerifySampleDeps();
    const lookups: number[] = [];
    const looked = new Set<string>();
    const envelopes: typeof deps.envelopes = {
      getEnvelopes: async (dlqArn, ids) => {
        lookups.push(ids.length);
        for (const id of ids) looked.add(id);
        return deps.envelopes.getEnvelopes(dlqArn, ids);
      },
    };
    const result = await verifySample(VerifySampleInput.parse({ plan, sample: sent }), {
      ...deps,
      envelopes,
    });
    expect([result.verdict, result.returned, result.peeked]).toEqual(['fail', sent.keys, 230]);
    // The 229 backlog messages carry no idempotency-key attribute (the returned sample does): each
    // is looked up once, 100 per lookup (one BatchGetItem), the rest after the peek.
    expect(looked.size).toBe(229);
    expect(lookups).toEqual([100, 100, 29]);
  });

  it('passes a partial peek when a consumer recorded every unseen sample as processed (N12)', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'vs-n12-processed-dlq',
      sourceNames: ['vs-n12-processed-src'],
      messages: backlog(30),
      incidentId: 'inc-vs-n12-processed',
    });
    const plan = planFor(dlq, { sampleSize: 2 });
    const sent = await sample({ plan, preflight: { verifyWindowSeconds: 0, fifo: false } });
    await consume(stack.tableName, dlq.sources[0]?.url as string, () => true);
    const result = await verifyWithBudget({ plan, sample: sent }, 10);
    expect([result.verdict, result.processed, result.unknown, result.peeked]).toEqual(['pass', 2, 0, 10]);
    expect(result.reason).toContain(
      'the peek saw 10 of 28 DLQ message(s), every unseen sample recorded as processed',
    );
  });

  it('is inconclusive when another receiver holds DLQ messages in flight, although the peek ended on an empty receive (N12)', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'vs-n12-held-dlq',
      sourceNames: ['vs-n12-held-src'],
      messages: backlog(4),
      incidentId: 'inc-vs-n12-held',
    });
    const plan = planFor(dlq, { sampleSize: 1 });
    const sent = await sample({ plan, preflight: { verifyWindowSeconds: 0, fifo: false } });
    await consume(stack.tableName, dlq.sources[0]?.url as string, () => false);
    // An SRE peeking in the console holds every DLQ message, the returned sample included.
    const held = await sqsClient().send(
      new ReceiveMessageCommand({ QueueUrl: dlq.dlqUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 300 }),
    );
    expect(held.Messages).toHaveLength(4);
    const result = await verify({ plan, sample: sent });
    expect([result.verdict, result.peeked, result.dlqDepth]).toEqual(['inconclusive', 0, 4]);
    expect(result.reason).toContain('held in flight by another receiver');
  });
});
