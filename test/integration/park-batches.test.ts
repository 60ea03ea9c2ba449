/**
 * Park's batched transfer (functions/park/park-transfer.ts) on the local stack: crashes between its
 * calls, a message SQS delivers twice, and per-entry failures of SendMessageBatch,
 * DeleteMessageBatch and BatchExecuteStatement. Each test asserts what the parking queue, the DLQ
 * and the ledger hold afterwards.
 */
import { ChangeMessageVisibilityCommand, type Message } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { documentClient, sqsClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { keys, TABLE } from '#platform/table.js';
import { setTransferFaultHook } from '#transfer/message-transfer.js';
import { createRedriveLedger, type LedgerEntry } from '#transfer/redrive-ledger.js';
import { createParkDeps } from '../../functions/park/deps.js';
import { ParkInput, type ParkResult, park } from '../../functions/park/park.js';
import { createQueue, drain, planFor, seedAndInventory } from '../support/redrive-fixtures.js';
import { useTransferStack } from '../support/transfer-stack.js';

const badPayload = { 'error-class': { DataType: 'String', StringValue: 'SyntaxError' } };

/** A DLQ of `poison` poison messages and `fine` redrivable ones, inventoried, and a parking queue. */
async function setUp(name: string, poison: number, fine: number) {
  const dlq = await seedAndInventory({
    sqs: sqsClient(),
    dlqName: `${name}-dlq`,
    sourceNames: [`${name}-src`],
    messages: [
      ...Array.from({ length: poison }, (_, i) => ({ body: `poison-${i}`, attributes: badPayload })),
      ...Array.from({ length: fine }, (_, i) => ({ body: `fine-${i}` })),
    ],
    incidentId: `inc-${name}`,
  });
  const parking = await createQueue(sqsClient(), `${name}-parking`);
  return { dlq, parking, plan: planFor(dlq, { parkingQueueUrl: parking }) };
}

const ledgerOf = async (dlqArn: string): Promise<LedgerEntry[]> => createRedriveLedger().list(dlqArn);
const bodies = (messages: Message[]) => messages.map((m) => m.Body ?? '').sort();
const poisonBodies = (n: number) => Array.from({ length: n }, (_, i) => `poison-${i}`).sort();
const fineBodies = (n: number) => Array.from({ length: n }, (_, i) => `fine-${i}`).sort();
/** Waits out the 2 s visibility timeout of the crashed attempt's receives (useTransferStack). */
const afterCrashedReceives = () => new Promise((resolve) => setTimeout(resolve, 2_500));

describe('Park moves its messages 10 at a time', () => {
  useTransferStack();

  it('parks 23 messages in three batches: each once in the parking queue, the ledger finished, the rest left in the DLQ', async () => {
    const { dlq, parking, plan } = await setUp('pb-happy', 23, 7);

    const result = await park(ParkInput.parse({ plan }), createParkDeps());

    expect(result).toEqual({ parked: 23, discarded: 0, skipped: 0, duplicateSendsPrevented: 0 });
    expect(bodies(await drain(sqsClient(), parking))).toEqual(poisonBodies(23));
    expect(bodies(await drain(sqsClient(), dlq.dlqUrl))).toEqual(fineBodies(7));
    const ledger = await ledgerOf(dlq.dlqArn);
    expect(ledger).toHaveLength(23);
    expect(ledger.every((e) => e.status === 'SENT' && e.dlqDeleted && !e.resent && e.sentMessageId)).toBe(
      true,
    );
  });

  it('after a crash between record and send, the parking queue holds nothing; the retry sends each once and marks them resent', async () => {
    const { dlq, parking, plan } = await setUp('pb-record', 12, 3);
    setTransferFaultHook((step) => {
      if (step === 'after-record') throw new Error('simulated crash after-record');
    });
    await expect(park(ParkInput.parse({ plan }), createParkDeps())).rejects.toThrow('after-record');
    setTransferFaultHook(undefined);
    const recorded = await ledgerOf(dlq.dlqArn);
    expect(recorded.length).toBeGreaterThan(0);
    expect(recorded.every((e) => e.status === 'IN_PROGRESS' && !e.dlqDeleted)).toBe(true);
    expect(await drain(sqsClient(), parking)).toEqual([]);

    await afterCrashedReceives();
    const retry = await park(ParkInput.parse({ plan }), createParkDeps());

    expect(retry).toEqual({ parked: 12, discarded: 0, skipped: 0, duplicateSendsPrevented: 0 });
    expect(bodies(await drain(sqsClient(), parking))).toEqual(poisonBodies(12));
    expect(bodies(await drain(sqsClient(), dlq.dlqUrl))).toEqual(fineBodies(3));
    const ledger = await ledgerOf(dlq.dlqArn);
    expect(ledger.every((e) => e.status === 'SENT' && e.dlqDeleted)).toBe(true);
    // The entries the crashed attempt recorded are resent: possible duplicates, named by Reconcile.
    expect(
      ledger
        .filter((e) => e.resent)
        .map((e) => e.dlqMessageId)
        .sort(),
    ).toEqual(recorded.map((e) => e.dlqMessageId).sort());
  });

  it('after a crash between send and delete, the retry deletes without sending again: one copy each', async () => {
    const { dlq, parking, plan } = await setUp('pb-send', 12, 3);
    setTransferFaultHook((step) => {
      if (step === 'after-send') throw new Error('simulated crash after-send');
    });
    await expect(park(ParkInput.parse({ plan }), createParkDeps())).rejects.toThrow('after-send');
    setTransferFaultHook(undefined);
    const sent = await ledgerOf(dlq.dlqArn);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((e) => e.status === 'SENT' && !e.dlqDeleted)).toBe(true);

    await afterCrashedReceives();
    const retry = await park(ParkInput.parse({ plan }), createParkDeps());

    expect(retry).toEqual({ parked: 12, discarded: 0, skipped: 0, duplicateSendsPrevented: sent.length });
    expect(bodies(await drain(sqsClient(), parking))).toEqual(poisonBodies(12));
    expect(bodies(await drain(sqsClient(), dlq.dlqUrl))).toEqual(fineBodies(3));
    const ledger = await ledgerOf(dlq.dlqArn);
    expect(ledger.every((e) => e.status === 'SENT' && e.dlqDeleted && !e.resent)).toBe(true);
    expect(ledger.filter((e) => e.duplicatePrevented)).toHaveLength(sent.length);
  });

  it('a message SQS delivers twice to one scan is parked once and leaves the DLQ', async () => {
    const { dlq, parking, plan } = await setUp('pb-twice', 3, 5);
    const deps = createParkDeps();
    let redelivered: string | undefined;
    const twice = createParkDeps({
      overrides: {
        queues: {
          ...deps.queues,
          // The first poison message received is made visible again at once: the next receive
          // delivers it a second time, with another receipt handle (at-least-once delivery).
          receive: async (url, opts) => {
            const batch = await deps.queues.receive(url, opts);
            const poison = batch.find((m) => m.Body?.startsWith('poison-'));
            if (!redelivered && poison) {
              redelivered = poison.MessageId;
              await sqsClient().send(
                new ChangeMessageVisibilityCommand({
                  QueueUrl: url,
                  ReceiptHandle: poison.ReceiptHandle,
                  VisibilityTimeout: 0,
                }),
              );
            }
            return batch;
          },
        },
      },
    });

    // A delete with the older receipt handle may fail (SQS wants the latest): the retry finishes it.
    const first = await park(ParkInput.parse({ plan }), twice).catch((e: Error) => e);
    const result: ParkResult =
      first instanceof Error ? await park(ParkInput.parse({ plan }), createParkDeps()) : first;

    expect(redelivered).toBeDefined();
    expect(result.parked).toBe(3);
    expect(bodies(await drain(sqsClient(), parking))).toEqual(poisonBodies(3));
    expect(bodies(await drain(sqsClient(), dlq.dlqUrl))).toEqual(fineBodies(5));
    const ledger = await ledgerOf(dlq.dlqArn);
    expect(ledger.filter((e) => e.dlqMessageId === redelivered)).toHaveLength(1);
    expect(ledger.every((e) => e.status === 'SENT' && e.dlqDeleted)).toBe(true);
  });

  it('SendMessageBatch entries that failed stay in the DLQ without a ledger entry; a server-side failure is retried and parks them once', async () => {
    const { dlq, parking, plan } = await setUp('pb-sendfail', 12, 3);
    const deps = createParkDeps();
    let failedBodies: string[] = [];
    const failing = createParkDeps({
      overrides: {
        sqs: {
          ...deps.sqs,
          // SQS answers two entries of the first batch with an internal error (not enqueued).
          sendBatch: async (url, messages) => {
            if (failedBodies.length > 0) return deps.sqs.sendBatch(url, messages);
            failedBodies = messages.slice(0, 2).map((m) => m.body);
            const rest = await deps.sqs.sendBatch(url, messages.slice(2));
            return [
              { ok: false, code: 'InternalError', message: 'simulated', senderFault: false },
              { ok: false, code: 'InternalError', message: 'simulated', senderFault: false },
              ...rest,
            ];
          },
        },
      },
    });

    await expect(park(ParkInput.parse({ plan }), failing)).rejects.toMatchObject({
      name: 'Redrive.Transient',
      message: expect.stringContaining('2 message(s) to park are not parked yet'),
    });
    expect(bodies(await drain(sqsClient(), parking))).toEqual(
      poisonBodies(12).filter((b) => !failedBodies.includes(b)),
    );
    const ledger = await ledgerOf(dlq.dlqArn);
    expect(ledger).toHaveLength(10);
    expect(ledger.every((e) => e.status === 'SENT' && e.dlqDeleted)).toBe(true);
    // Released at once: the retry receives them without waiting.
    const retry = await park(ParkInput.parse({ plan }), createParkDeps());
    expect(retry).toEqual({ parked: 12, discarded: 0, skipped: 0, duplicateSendsPrevented: 0 });
    expect(bodies(await drain(sqsClient(), parking))).toEqual(failedBodies.sort());
    expect(bodies(await drain(sqsClient(), dlq.dlqUrl))).toEqual(fineBodies(3));
    expect((await ledgerOf(dlq.dlqArn)).every((e) => e.dlqDeleted && !e.resent)).toBe(true);
  });

  it('a SendMessageBatch entry refused as the sender fault refuses the run, naming it; the message stays in the DLQ', async () => {
    const { dlq, parking, plan } = await setUp('pb-sendrefused', 4, 2);
    const deps = createParkDeps();
    let refusals = 0;
    const refusing = createParkDeps({
      overrides: {
        sqs: {
          ...deps.sqs,
          sendBatch: async (url, messages) => {
            refusals += 1;
            return [
              { ok: false, code: 'InvalidMessageContents', message: 'simulated', senderFault: true },
              ...(await deps.sqs.sendBatch(url, messages.slice(1))),
            ];
          },
        },
      },
    });

    await expect(park(ParkInput.parse({ plan }), refusing)).rejects.toMatchObject({
      name: 'Redrive.Refused',
      message: expect.stringContaining('InvalidMessageContents'),
    });
    expect(await drain(sqsClient(), parking)).toHaveLength(3);
    const left = bodies(await drain(sqsClient(), dlq.dlqUrl));
    expect(left).toHaveLength(3);
    expect(left.filter((b) => b.startsWith('poison-'))).toHaveLength(1);
    expect(await ledgerOf(dlq.dlqArn)).toHaveLength(3);
    // A copy SQS refused for what it is is not sent again: the scan stopped looking for it (before,
    // it received the released message again and again until its budget: 28 s here, over 120 s
    // under load in a fresh-clone CI run).
    expect(refusals).toBe(1);
  });

  it('DeleteMessageBatch entries that failed stay in the DLQ with their ledger entry SENT; the retry deletes them without a second send', async () => {
    const { dlq, parking, plan } = await setUp('pb-delfail', 12, 3);
    const deps = createParkDeps();
    let failed: string[] = [];
    const failing = createParkDeps({
      overrides: {
        sqs: {
          ...deps.sqs,
          // Two entries of the first DeleteMessageBatch come back Failed (not deleted).
          deleteBatch: async (url, handles) => {
            if (failed.length > 0) return deps.sqs.deleteBatch(url, handles);
            failed = handles.slice(0, 2);
            await deps.sqs.deleteBatch(url, handles.slice(2));
            return new Set(failed);
          },
        },
      },
    });

    await expect(park(ParkInput.parse({ plan }), failing)).rejects.toMatchObject({
      name: 'Redrive.Transient',
      message: expect.stringContaining('sent, not yet deleted from the DLQ'),
    });
    const ledger = await ledgerOf(dlq.dlqArn);
    expect(ledger.filter((e) => e.status === 'SENT' && !e.dlqDeleted)).toHaveLength(2);
    expect(ledger.filter((e) => e.dlqDeleted)).toHaveLength(10);

    const retry = await park(ParkInput.parse({ plan }), createParkDeps());
    expect(retry).toEqual({ parked: 12, discarded: 0, skipped: 0, duplicateSendsPrevented: 2 });
    expect(bodies(await drain(sqsClient(), parking))).toEqual(poisonBodies(12));
    expect(bodies(await drain(sqsClient(), dlq.dlqUrl))).toEqual(fineBodies(3));
    expect((await ledgerOf(dlq.dlqArn)).every((e) => e.dlqDeleted)).toBe(true);
  });

  it('BatchExecuteStatement per-statement failures: an entry already there is decided by the per-message ledger, and an entry taken over before SENT is not deleted', async () => {
    const { dlq, parking, plan } = await setUp('pb-statements', 3, 0);
    const ids: string[] = [];
    for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn)) ids.push(e.messageId);
    const [first, second] = ids;
    // Another run recorded `first` already and its lease is over: the INSERT fails with
    // DuplicateItem, and the per-message begin takes the entry over (resent: it may have sent).
    await documentClient().send(
      new PutCommand({
        TableName: pipelineConfig().tableName,
        Item: {
          [TABLE.partitionKey]: keys.dlq(dlq.dlqArn),
          [TABLE.sortKey]: keys.ledger(first as string),
          entity: 'redrive-ledger',
          shapeVersion: 2,
          key: 'k@first',
          dlqArn: dlq.dlqArn,
          dlqMessageId: first,
          incidentId: dlq.incidentId,
          redriveId: 'an-earlier-run',
          kind: 'park',
          status: 'IN_PROGRESS',
          destinationUrl: parking,
          sentMessageId: null,
          dlqDeleted: false,
          duplicatePrevented: false,
          resent: false,
          takenOverFrom: [],
          visibleAfter: 0,
          updatedAt: '2020-01-01T00:00:00.000Z',
        },
      }),
    );
    // Between record and SENT, a third run takes `second`'s entry over: its SENT statement fails
    // its condition (ConditionalCheckFailed), so the message is left in the DLQ for that run.
    // SQS may hand the three out over several receives, so the hook acts only once `second`'s own
    // batch has recorded it (this run's entry is there), whichever batch that is.
    setTransferFaultHook(async (step) => {
      if (step !== 'after-record' || !second) return;
      const recorded = await createRedriveLedger().get(dlq.dlqArn, second);
      if (recorded?.redriveId !== plan.incidentId) return;
      setTransferFaultHook(undefined);
      await documentClient().send(
        new PutCommand({
          TableName: pipelineConfig().tableName,
          Item: {
            ...recorded,
            [TABLE.partitionKey]: keys.dlq(dlq.dlqArn),
            [TABLE.sortKey]: keys.ledger(second),
            entity: 'redrive-ledger',
            shapeVersion: 2,
            redriveId: 'a-later-run',
          },
        }),
      );
    });

    await expect(park(ParkInput.parse({ plan }), createParkDeps())).rejects.toMatchObject({
      name: 'Redrive.Transient',
      message: expect.stringContaining('taken over by another run'),
    });
    const ledger = new Map((await ledgerOf(dlq.dlqArn)).map((e) => [e.dlqMessageId, e]));
    expect(ledger.get(first as string)).toMatchObject({
      redriveId: plan.incidentId,
      takenOverFrom: ['an-earlier-run'],
      resent: true,
      dlqDeleted: true,
    });
    expect(ledger.get(second as string)).toMatchObject({ redriveId: 'a-later-run', dlqDeleted: false });
    expect([...ledger.values()].filter((e) => e.dlqDeleted)).toHaveLength(2);
    // The copy of `second` was sent (the later run's entry stands for it); the DLQ still holds it.
    expect(await drain(sqsClient(), parking)).toHaveLength(3);
    expect((await drain(sqsClient(), dlq.dlqUrl)).map((m) => m.MessageId)).toEqual([second]);
  });
});
