import { ReceiveMessageCommand, SendMessageCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sqsClient } from '#platform/clients.js';
import { sleep } from '#platform/sleep.js';
import { setTransferFaultHook } from '#transfer/message-transfer.js';
import { createMoveTasks } from '#transfer/move-tasks.js';
import { createParkDeps } from '../../functions/park/deps.js';
import { handler } from '../../functions/park/handler.js';
import { ParkInput, type ParkResult, park } from '../../functions/park/park.js';
import {
  createQueue,
  drain,
  inventoryAs,
  lambdaContext,
  planFor,
  seedAndInventory,
} from '../support/redrive-fixtures.js';
import { queueDepth } from '../support/seed-dlq.js';
import { useTransferStack } from '../support/transfer-stack.js';

const run = (event: unknown) => handler(event as never, lambdaContext) as Promise<ParkResult>;
const badPayload = { 'error-class': { DataType: 'String', StringValue: 'SyntaxError' } };

async function statesOf(dlqArn: string): Promise<Record<string, string>>;
/** MessageIds of the DLQ's envelopes in `state`. */
async function statesOf(dlqArn: string, state: string): Promise<string[]>;
async function statesOf(dlqArn: string, state?: string): Promise<Record<string, string> | string[]> {
  const out: Record<string, string> = {};
  const ids: string[] = [];
  for await (const e of createEnvelopeStore().listEnvelopes(dlqArn)) {
    out[e.messageId] = `${e.state}${e.stateReason ? `: ${e.stateReason}` : ''}`;
    if (e.state === state) ids.push(e.messageId);
  }
  return state === undefined ? out : ids;
}

/** Waits until `check` holds, polling every 200 ms; throws naming `what` after 30 s. */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** The consumer still fails: receive and never delete until SQS dead-letters `expected` messages. */
async function failUntilDeadLettered(sourceUrl: string, dlqUrl: string, expected: number): Promise<void> {
  await until(`${expected} message(s) back in ${dlqUrl}`, async () => {
    const out = await sqsClient().send(
      new ReceiveMessageCommand({ QueueUrl: sourceUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
    );
    return (out.Messages?.length ?? 0) === 0 && (await queueDepth(sqsClient(), dlqUrl)).visible >= expected;
  });
}

describe('Park against the local stack', () => {
  useTransferStack();

  it('C07 moves poison, permanent and source-less messages to the parking queue so the move task cannot carry them', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'c07-park-dlq',
      sourceNames: ['c07-park-orders', 'c07-park-payments'],
      messages: [
        { body: '{"orderId":"o-1"}', source: 0 },
        { body: '{"paymentId":"p-9"}', source: 1 },
        { body: '{"orderId":"bad"}', source: 0, attributes: badPayload },
      ],
      sendStraightToDlq: [{ body: 'not json at all' }],
      incidentId: 'inc-c07-park',
    });
    const parking = await createQueue(sqsClient(), 'c07-parking');
    const result = await run({ plan: planFor(dlq, { parkingQueueUrl: parking }) });
    expect(result).toEqual({ parked: 2, discarded: 0, skipped: 0, duplicateSendsPrevented: 0 });

    const parked = await drain(sqsClient(), parking);
    expect(parked.map((m) => m.Body).sort()).toEqual(['not json at all', '{"orderId":"bad"}']);
    expect(
      parked.find((m) => m.Body === '{"orderId":"bad"}')?.MessageAttributes?.['error-class']?.StringValue,
    ).toBe('SyntaxError');
    const left = await drain(sqsClient(), dlq.dlqUrl);
    expect(left.map((m) => m.Body).sort()).toEqual(['{"orderId":"o-1"}', '{"paymentId":"p-9"}']);

    const states = Object.values(await statesOf(dlq.dlqArn)).sort();
    expect(states).toEqual([
      'IN_DLQ',
      'IN_DLQ',
      'PARKED: classified permanent: do not redrive (run inc-c07-park)',
      'PARKED: classified poison: do not redrive (run inc-c07-park)',
    ]);
  });

  it('records an explicit discard when discardPoison is set, and sends nothing', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'discard-dlq',
      sourceNames: ['discard-src'],
      messages: [{ body: 'keep' }, { body: 'drop', attributes: badPayload }],
      incidentId: 'inc-discard',
    });
    const result = await run({ plan: planFor(dlq, { discardPoison: true }) });
    expect([result.parked, result.discarded]).toEqual([0, 1]);
    expect((await queueDepth(sqsClient(), dlq.dlqUrl)).visible).toBe(1);
    expect(Object.values(await statesOf(dlq.dlqArn))).toContain(
      'DISCARDED: classified permanent: do not redrive (run inc-discard)',
    );
  });

  it('refuses to start when messages must be parked but there is no parking queue, and moves nothing', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'noparking-dlq',
      sourceNames: ['noparking-src'],
      messages: [{ body: 'drop', attributes: badPayload }],
      incidentId: 'inc-noparking',
    });
    await expect(run({ plan: planFor(dlq) })).rejects.toMatchObject({ name: 'Redrive.Refused' });
    expect((await queueDepth(sqsClient(), dlq.dlqUrl)).visible).toBe(1);
  });

  it('N01 parks what fits the parking queue, leaves a larger message in the DLQ untouched, and refuses naming it', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'n01-park-dlq',
      sourceNames: ['n01-park-src'],
      messages: [
        { body: `{"blob":"${'y'.repeat(1100)}"}`, attributes: badPayload },
        { body: '{"small":1}', attributes: badPayload },
        { body: 'keep' },
      ],
      incidentId: 'inc-n01-park',
    });
    const parking = await createQueue(sqsClient(), 'n01-parking');
    await sqsClient().send(
      new SetQueueAttributesCommand({ QueueUrl: parking, Attributes: { MaximumMessageSize: '1024' } }),
    );
    const refused = run({ plan: planFor(dlq, { parkingQueueUrl: parking }) });
    await expect(refused).rejects.toMatchObject({ name: 'Redrive.Refused' });
    await expect(refused).rejects.toThrow(
      /1 message\(s\) to park are larger than the parking queue's MaximumMessageSize/,
    );
    await expect(refused).rejects.toThrow(/the parking queue takes 1024\)/);
    expect((await drain(sqsClient(), parking)).map((m) => m.Body)).toEqual(['{"small":1}']);
    const states = Object.values(await statesOf(dlq.dlqArn)).sort();
    expect(states).toEqual([
      'IN_DLQ',
      'IN_DLQ',
      'PARKED: classified permanent: do not redrive (run inc-n01-park)',
    ]);
    expect((await queueDepth(sqsClient(), dlq.dlqUrl)).visible).toBe(2);
  });

  it('N08 parks a message that keeps coming back through move tasks once its redrive history reaches maxRedrives, across incidents', async () => {
    const loop = {
      body: '{"loop":1}',
      attributes: { 'error-class': { DataType: 'String', StringValue: 'ThrottlingException' } },
    };
    let dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'n08-loop-dlq',
      sourceNames: ['n08-loop-src'],
      messages: [loop],
      maxReceiveCount: 2,
      incidentId: 'inc-n08-1',
    });
    const source = dlq.sources[0] as { url: string; arn: string };
    const parking = await createQueue(sqsClient(), 'n08-parking');
    const moveTasks = createMoveTasks();
    const parkedPerRound: number[] = [];
    for (let round = 1; round <= 4; round++) {
      if (round > 1) dlq = await inventoryAs(sqsClient(), dlq, `inc-n08-${round}`);
      if (round === 4) {
        // A message seen for the first time in this incident has no history: it is not parked.
        await sqsClient().send(new SendMessageCommand({ QueueUrl: source.url, MessageBody: '{"fresh":1}' }));
        await failUntilDeadLettered(source.url, dlq.dlqUrl, 2);
        dlq = await inventoryAs(sqsClient(), dlq, 'inc-n08-4');
      }
      const result = await run({ plan: planFor(dlq, { parkingQueueUrl: parking, maxRedrives: 3 }) });
      parkedPerRound.push(result.parked);
      if (round === 4) break;
      // Each round: StartMessageMoveTask carries it back unchanged (no redrive-count attribute is
      // added), the consumer fails it again, SQS dead-letters it under a new MessageId, and
      // Reconcile marks the moved envelope REDRIVEN (moved by the move task).
      const [envelope] = (await statesOf(dlq.dlqArn, 'IN_DLQ')) as [string];
      const started = await moveTasks.start({ sourceArn: dlq.dlqArn, rate: 10 });
      expect(started.ok).toBe(true);
      await until('the move task to finish', async () => {
        const [task] = await moveTasks.list(dlq.dlqArn);
        return task?.status === 'COMPLETED' && (await queueDepth(sqsClient(), dlq.dlqUrl)).visible === 0;
      });
      await createEnvelopeStore().setState(
        dlq.dlqArn,
        envelope,
        'REDRIVEN',
        `moved by the move task (run inc-n08-${round})`,
      );
      await failUntilDeadLettered(source.url, dlq.dlqUrl, 1);
    }
    expect(parkedPerRound).toEqual([0, 0, 0, 1]);
    const parked = await drain(sqsClient(), parking);
    expect(parked.map((m) => m.Body)).toEqual(['{"loop":1}']);
    // The message itself never carried a count: only the history saw its three bulk redrives.
    expect(parked[0]?.MessageAttributes?.['redrive-count']).toBeUndefined();
    const reasons = Object.values(await statesOf(dlq.dlqArn)).sort();
    expect(reasons).toEqual([
      'IN_DLQ',
      'PARKED: redriven 3 times (maxRedrives 3) (run inc-n08-4)',
      'REDRIVEN: moved by the move task (run inc-n08-1)',
      'REDRIVEN: moved by the move task (run inc-n08-2)',
      'REDRIVEN: moved by the move task (run inc-n08-3)',
    ]);
  });

  it('after a crash between send and delete, the retry parks the message once', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'park-crash-dlq',
      sourceNames: ['park-crash-src'],
      messages: [{ body: 'poison-1', attributes: badPayload }],
      incidentId: 'inc-park-crash',
    });
    const parking = await createQueue(sqsClient(), 'park-crash-parking');
    setTransferFaultHook((step) => {
      if (step === 'after-send') throw new Error('simulated crash after-send');
    });
    const plan = planFor(dlq, { parkingQueueUrl: parking });
    await expect(run({ plan })).rejects.toThrow('simulated crash');
    setTransferFaultHook(undefined);
    // The retry waits until the crashed receive's visibility timeout ends, then deletes without sending.
    const retry = await run({ plan });
    expect(retry).toEqual({ parked: 1, discarded: 0, skipped: 0, duplicateSendsPrevented: 1 });
    expect(await drain(sqsClient(), parking)).toHaveLength(1);
    expect((await queueDepth(sqsClient(), dlq.dlqUrl)).visible).toBe(0);
  });

  it('after a crash before the envelope states were written, the retry sets them from the ledger and sends nothing again', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'park-states-dlq',
      sourceNames: ['park-states-src'],
      messages: [
        { body: 'poison-1', attributes: badPayload },
        { body: 'fine-1' },
        { body: 'poison-2', attributes: badPayload },
        { body: 'poison-3', attributes: badPayload },
      ],
      incidentId: 'inc-park-states',
    });
    const parking = await createQueue(sqsClient(), 'park-states-parking');
    const plan = planFor(dlq, { parkingQueueUrl: parking });
    // The attempt moves all three, then dies before its state flush reaches DynamoDB.
    const crashed = createParkDeps({
      overrides: {
        envelopeStates: {
          setStates: async () => {
            throw new Error('simulated crash before the states flush');
          },
        },
      },
    });
    await expect(park(ParkInput.parse({ plan }), crashed)).rejects.toThrow('simulated crash');
    expect(await statesOf(dlq.dlqArn, 'PARKED')).toEqual([]);
    expect((await queueDepth(sqsClient(), dlq.dlqUrl)).visible).toBe(1);

    const retry = await run({ plan });
    expect(retry).toEqual({ parked: 3, discarded: 0, skipped: 0, duplicateSendsPrevented: 0 });
    expect((await statesOf(dlq.dlqArn, 'PARKED')).length).toBe(3);
    expect(
      Object.values(await statesOf(dlq.dlqArn)).filter((s) => s.endsWith('(run inc-park-states)')),
    ).toHaveLength(3);
    expect(await statesOf(dlq.dlqArn, 'IN_DLQ')).toHaveLength(1);
    expect(await drain(sqsClient(), parking)).toHaveLength(3);
  });

  it('after a crash right after its first state flush, the retry parks the rest and stops once it has found them, without re-receiving what it holds', async () => {
    // 45 to park: the attempt parks 30 (three batches of 10), flushes 25 of their states (one
    // BatchExecuteStatement of 25), and dies right after; its ledger says those 30 are gone from
    // the DLQ, 5 of their envelopes are still IN_DLQ, and 15 are still to be found.
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'park-flush-crash-dlq',
      sourceNames: ['park-flush-crash-src'],
      messages: Array.from({ length: 60 }, (_, i) =>
        i % 4 === 0 ? { body: `fine-${i}` } : { body: `poison-${i}`, attributes: badPayload },
      ),
      incidentId: 'inc-park-flush-crash',
    });
    const parking = await createQueue(sqsClient(), 'park-flush-crash-parking');
    const plan = planFor(dlq, { parkingQueueUrl: parking });
    const real = createParkDeps();
    let flushes = 0;
    const crashed = createParkDeps({
      overrides: {
        envelopeStates: {
          setStates: async (dlqArn, changes) => {
            flushes += 1;
            if (flushes > 1) throw new Error('the process is gone');
            await real.envelopeStates.setStates(dlqArn, changes);
            throw new Error('simulated crash right after the first state flush');
          },
        },
      },
    });
    await expect(park(ParkInput.parse({ plan }), crashed)).rejects.toThrow('simulated crash');
    expect(await statesOf(dlq.dlqArn, 'PARKED')).toHaveLength(25);

    // The retry, with a scan budget far above what is left: it must stop at the receive that
    // brings the last of the 15 it has to park, not go on receiving (and holding) the redrivable
    // messages until the budget or the invocation runs out.
    let toFind = 15;
    let receivesAfterLastFound = 0;
    const retry = await park(
      ParkInput.parse({ plan }),
      createParkDeps({
        overrides: {
          maxMessages: 1_000,
          queues: {
            ...real.queues,
            receive: async (url, opts) => {
              if (toFind === 0) receivesAfterLastFound += 1;
              const batch = await real.queues.receive(url, opts);
              toFind -= batch.filter((m) => m.Body?.startsWith('poison-')).length;
              return batch;
            },
          },
        },
      }),
    );
    expect(retry).toEqual({ parked: 45, discarded: 0, skipped: 0, duplicateSendsPrevented: 0 });
    expect(await statesOf(dlq.dlqArn, 'PARKED')).toHaveLength(45);
    expect([toFind, receivesAfterLastFound]).toEqual([0, 0]);
    expect(await drain(sqsClient(), parking)).toHaveLength(45);
    expect((await drain(sqsClient(), dlq.dlqUrl)).map((m) => m.Body).sort()).toEqual(
      Array.from({ length: 15 }, (_, i) => `fine-${i * 4}`).sort(),
    );
  });
});
