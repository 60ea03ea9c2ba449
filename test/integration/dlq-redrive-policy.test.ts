/**
 * DLQs with their own RedrivePolicy (issue 13 item 4) on the local stack: the real inventory and
 * Preflight. As on SQS, a message arrives in the DLQ with the receive count it had in its source
 * (3 here, the seeding consumer's maxReceiveCount), a peek costs one receive (its release is not
 * one), and the DLQ forwards a message whose count passes its maxReceiveCount to the next DLQ.
 * The rule tested: no peek ever takes a message past maxReceiveCount - 1.
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnvelopeStore, type StoredEnvelope } from '#inventory/envelope-store.js';
import { sqsClient } from '#platform/clients.js';
import { handler as preflightHandler } from '../../functions/preflight/handler.js';
import type { PreflightResult } from '../../functions/preflight/preflight.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { createQueue, inventoryAs, lambdaContext, planFor } from '../support/redrive-fixtures.js';
import { queueDepth, seedDlq } from '../support/seed-dlq.js';

describe('a DLQ with its own RedrivePolicy: the pipeline counts its peeks and never pushes a message onward', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const chained = async (name: string, maxReceiveCount: number) => {
    const nextUrl = await createQueue(sqsClient(), `${name}-next`);
    const nextArn = (
      await sqsClient().send(
        new GetQueueAttributesCommand({ QueueUrl: nextUrl, AttributeNames: ['QueueArn'] }),
      )
    ).Attributes?.QueueArn as string;
    const seeded = await seedDlq({
      sqs: sqsClient(),
      dlqName: `${name}-dlq`,
      sourceNames: [`${name}-src`],
      messages: [{ body: '{"n":1}' }, { body: '{"n":2}' }, { body: '{"n":3}' }],
      dlqAttributes: {
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: nextArn, maxReceiveCount }),
      },
    });
    return { seeded, nextUrl, nextArn };
  };
  const envelopes = async (dlqArn: string) => {
    const all: StoredEnvelope[] = [];
    for await (const e of createEnvelopeStore().listEnvelopes(dlqArn)) all.push(e);
    return all;
  };

  it('inventories while every message can afford a peek, then receives nothing, so none reaches the next DLQ', async () => {
    const { seeded, nextUrl, nextArn } = await chained('rp-inv', 6);
    expect(nextArn).toBe(seeded.dlqArn.replace('rp-inv-dlq', 'rp-inv-next'));

    const first = await inventoryAs(sqsClient(), seeded, 'inc-rp-1');
    const second = await inventoryAs(sqsClient(), seeded, 'inc-rp-1');
    expect([first.envelopes, second.envelopes]).toEqual([3, 3]);
    const stored = await envelopes(seeded.dlqArn);
    expect(stored.map((e) => e.receiveCount)).toEqual([5, 5, 5]);
    expect(stored[0]?.dlqRedrivePolicy).toEqual({
      maxReceiveCount: 6,
      deadLetterTargetArn: nextArn,
      receiveCountIncludesPipelinePeeks: true,
    });

    // A third peek would take each message to count 6 = maxReceiveCount, leaving no receive spare.
    const third = await inventoryAs(sqsClient(), seeded, 'inc-rp-1');
    expect(third.envelopes).toBe(0);
    expect((await envelopes(seeded.dlqArn)).map((e) => e.receiveCount)).toEqual([5, 5, 5]);
    expect(await queueDepth(sqsClient(), seeded.dlqUrl)).toEqual({ visible: 3, inFlight: 0 });
    expect(await queueDepth(sqsClient(), nextUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('refuses before approval a run whose peeks exceed what its messages can afford, naming the limit, and lets a run that fits go with the count in its warnings', async () => {
    const tight = await chained('rp-tight', 13);
    await inventoryAs(sqsClient(), tight.seeded, 'inc-rp-tight');
    const refused = (await preflightHandler(
      { action: 'preflight', plan: planFor({ ...tight.seeded, incidentId: 'inc-rp-tight' }) } as never,
      lambdaContext,
    )) as PreflightResult;

    expect(refused.ok).toBe(false);
    expect(refused.refusal).toMatch(
      /^redrive refused: rp-tight-dlq has its own RedrivePolicy \(maxReceiveCount 13 to rp-tight-next\): every receive counts toward it; its most-received message \S+ has been received 4 time\(s\), the pipeline's peeks included, so each message can afford 8 more pipeline peek\(s\) \(1 receive\(s\) each\) before one would move it to rp-tight-next; this run peeks up to 9 time\(s\) \(recheck 1, SampleRedrive 2, VerifySample 3, ramp gates 2, Reconcile 1\): it could move messages to the next DLQ/,
    );
    expect(await queueDepth(sqsClient(), tight.nextUrl)).toEqual({ visible: 0, inFlight: 0 });

    const roomy = await chained('rp-roomy', 30);
    await inventoryAs(sqsClient(), roomy.seeded, 'inc-rp-roomy');
    const ok = (await preflightHandler(
      { action: 'preflight', plan: planFor({ ...roomy.seeded, incidentId: 'inc-rp-roomy' }) } as never,
      lambdaContext,
    )) as PreflightResult;
    expect(ok.ok).toBe(true);
    expect(ok.warnings.join('\n')).toContain('can afford 25 more pipeline peek(s)');
  });
});
