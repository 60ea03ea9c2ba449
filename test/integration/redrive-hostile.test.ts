/**
 * Hostile conditions for Park against the local stack: messages held invisible
 * by someone else (a crashed attempt's receive, a console "poll for messages") when the step runs,
 * and DLQs deeper than one scan's hold budget. The invariant under attack: when the step returns,
 * no message it had to take out of the DLQ is still there for the bulk move to carry.
 */
import { DeleteQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sqsClient } from '#platform/clients.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { handler as parkHandler } from '../../functions/park/handler.js';
import type { ParkResult } from '../../functions/park/park.js';
import { handler as preflightHandler } from '../../functions/preflight/handler.js';
import type { PreflightResult } from '../../functions/preflight/preflight.js';
import { createQueue, drain, lambdaContext, planFor, seedAndInventory } from '../support/redrive-fixtures.js';
import { seedDlq } from '../support/seed-dlq.js';
import { scaled } from '../support/timeouts.js';
import { holdAll, useTransferStack } from '../support/transfer-stack.js';

const park = (event: unknown) => parkHandler(event as never, lambdaContext) as Promise<ParkResult>;
const badPayload = { 'error-class': { DataType: 'String', StringValue: 'SyntaxError' } };

describe('Park and SampleRedrive under hostile DLQ conditions', () => {
  useTransferStack();

  it('C07 Park parks do-not-redrive messages that another receive holds invisible when it starts, instead of leaving them for the move task', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'hostile-held-dlq',
      sourceNames: ['hostile-held-src'],
      messages: [
        { body: 'ok-1' },
        { body: 'bad-1', attributes: badPayload },
        { body: 'bad-2', attributes: badPayload },
      ],
      incidentId: 'inc-hostile-held',
    });
    const parking = await createQueue(sqsClient(), 'hostile-held-parking');
    // A crashed Park attempt (or an SRE polling in the console) received everything a moment ago.
    expect(await holdAll(dlq.dlqUrl, 2)).toBe(3);
    const result = await park({ plan: planFor(dlq, { parkingQueueUrl: parking }) });
    expect(result).toEqual({ parked: 2, discarded: 0, skipped: 0, duplicateSendsPrevented: 0 });
    expect((await drain(sqsClient(), parking)).map((m) => m.Body).sort()).toEqual(['bad-1', 'bad-2']);
    expect((await drain(sqsClient(), dlq.dlqUrl)).map((m) => m.Body)).toEqual(['ok-1']);
  });

  it('C07 Park fails rather than returning while a do-not-redrive message stays held by someone else past its waits', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'hostile-longheld-dlq',
      sourceNames: ['hostile-longheld-src'],
      messages: [{ body: 'bad-1', attributes: badPayload }],
      incidentId: 'inc-hostile-longheld',
    });
    const parking = await createQueue(sqsClient(), 'hostile-longheld-parking');
    expect(await holdAll(dlq.dlqUrl, 30)).toBe(1);
    await expect(park({ plan: planFor(dlq, { parkingQueueUrl: parking }) })).rejects.toMatchObject({
      name: 'Redrive.Transient',
    });
    expect(await drain(sqsClient(), parking)).toHaveLength(0);
  });

  it(
    'C07 Park reaches do-not-redrive messages queued behind more than a thousand redrivable ones',
    async () => {
      // 1,100 redrivable messages dead-lettered by a failing consumer, then two poison ones behind them.
      const dlq = await seedDlq({
        sqs: sqsClient(),
        dlqName: 'hostile-deep-dlq',
        sourceNames: ['hostile-deep-src'],
        messages: Array.from({ length: 1100 }, (_, n) => ({ body: `{"n":${n}}` })),
        maxReceiveCount: 1,
        sendStraightToDlq: [{ body: 'bad-1' }, { body: 'bad-2' }],
        timeoutMs: scaled(60_000),
      });
      expect(await inventoryAll(dlq.dlqUrl, dlq.dlqArn, 'inc-hostile-deep')).toBe(1102);
      const parking = await createQueue(sqsClient(), 'hostile-deep-parking');
      const result = await park({
        plan: planFor({ ...dlq, incidentId: 'inc-hostile-deep' }, { parkingQueueUrl: parking }),
      });
      expect([result.parked, result.skipped]).toEqual([2, 0]);
      expect((await drain(sqsClient(), parking)).map((m) => m.Body).sort()).toEqual(['bad-1', 'bad-2']);
    },
    scaled(120_000),
  );

  it('C07 a do-not-redrive message that a failed earlier run marked PARKED but never moved is parked by the next run', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'hostile-rerun-dlq',
      sourceNames: ['hostile-rerun-src'],
      messages: [{ body: '{"ok":1}' }, { body: 'bad-1', attributes: badPayload }],
      incidentId: 'inc-hostile-rerun-1',
    });
    // Run 1: its parking queue was deleted; Park records PARKED, then SendMessage fails.
    const gone = await createQueue(sqsClient(), 'hostile-rerun-gone');
    await sqsClient().send(new DeleteQueueCommand({ QueueUrl: gone }));
    await expect(park({ plan: planFor(dlq, { parkingQueueUrl: gone }) })).rejects.toMatchObject({
      name: 'Redrive.QueueNotFound',
    });
    // Run 2 of the same DLQ, with a working parking queue.
    const parking = await createQueue(sqsClient(), 'hostile-rerun-parking');
    const plan2 = planFor({ ...dlq, incidentId: 'inc-hostile-rerun-2' }, { parkingQueueUrl: parking });
    const result = await park({ plan: plan2 });
    expect([result.parked, result.skipped]).toEqual([1, 0]);
    expect((await drain(sqsClient(), parking)).map((m) => m.Body)).toEqual(['bad-1']);
    expect((await drain(sqsClient(), dlq.dlqUrl)).map((m) => m.Body)).toEqual(['{"ok":1}']);
    const reasons: string[] = [];
    for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn))
      if (e.state === 'PARKED') reasons.push(e.stateReason ?? '');
    expect(reasons).toEqual(['classified permanent: do not redrive (run inc-hostile-rerun-2)']);
  });

  it('Preflight refuses before approval a run whose peeks a DLQ with its own RedrivePolicy cannot afford (it would pass messages on)', async () => {
    const next = await createQueue(sqsClient(), 'hostile-chain-next');
    const nextArn = (
      await sqsClient().send(new GetQueueAttributesCommand({ QueueUrl: next, AttributeNames: ['QueueArn'] }))
    ).Attributes?.QueueArn as string;
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'hostile-chain-dlq',
      sourceNames: ['hostile-chain-src'],
      messages: [{ body: '{"c":1}' }],
      dlqAttributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: nextArn, maxReceiveCount: 4 }) },
      incidentId: 'inc-hostile-chain',
    });
    const result = (await preflightHandler(
      { action: 'preflight', plan: planFor(dlq) } as never,
      lambdaContext,
    )) as PreflightResult;
    // The receive budget (issue 13 item 4): the run's peeks would push messages on to the next DLQ,
    // so it is refused before approval, naming the policy, the next DLQ and the fix.
    expect(result.ok).toBe(false);
    expect(result.refusal).toContain(
      'hostile-chain-dlq has its own RedrivePolicy (maxReceiveCount 4 to hostile-chain-next)',
    );
    expect(result.refusal).toContain('it could move messages to the next DLQ');
    expect(result.refusal).toContain("raise the DLQ's maxReceiveCount");
  });
});

/** Stores envelopes for every message now in the DLQ, as triage's inventory would. */
async function inventoryAll(dlqUrl: string, dlqArn: string, incidentId: string): Promise<number> {
  const { inventoryDlq } = await import('#inventory/inventory.js');
  const { QueueRegistration } = await import('#inventory/model.js');
  const queues = createSqsQueues({ client: sqsClient() });
  const result = await inventoryDlq(
    {
      dlq: await queues.describe(dlqUrl),
      registration: QueueRegistration.parse({ dlqArn }),
      incidentId,
      waitTimeSeconds: 1,
    },
    { queues, envelopes: createEnvelopeStore(), remainingTimeMs: () => 100_000, now: Date.now },
  );
  return result.written;
}
