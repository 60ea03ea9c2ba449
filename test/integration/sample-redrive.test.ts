import { SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { documentClient, resetClients, sqsClient } from '#platform/clients.js';
import {
  createTransferSqs,
  fifoDeduplicationId,
  outgoingSizeBytes,
  setTransferFaultHook,
  type TransferStep,
} from '#transfer/message-transfer.js';
import { createRedriveLedger } from '#transfer/redrive-ledger.js';
import { handler } from '../../functions/sample-redrive/handler.js';
import type { SampleRedriveResult } from '../../functions/sample-redrive/sample-redrive.js';
import { drain, lambdaContext, ledgerEntry, planFor, seedAndInventory } from '../support/redrive-fixtures.js';
import { queueDepth } from '../support/seed-dlq.js';
import { useTransferStack } from '../support/transfer-stack.js';

const run = (event: unknown) => handler(event as never, lambdaContext) as Promise<SampleRedriveResult>;
const preflightSlot = (fifo = false) => ({ verifyWindowSeconds: 45, fifo });

/** Throws once at `step`: the process "crashes" there. */
function crashOnceAt(step: TransferStep): { crashedKey: () => string | undefined } {
  let crashed: string | undefined;
  setTransferFaultHook((at, key) => {
    if (at === step && crashed === undefined) {
      crashed = key;
      throw new Error(`simulated crash ${step}`);
    }
  });
  return { crashedKey: () => crashed };
}

/**
 * Runs `fn` with SampleRedrive's receive visibility timeout at `seconds` instead of this file's 2 s
 * (test/support/transfer-stack.ts, short for the crash-retry tests). A FIFO DLQ refuses the delete
 * of a message whose visibility timeout ended ("The receipt handle has expired"): on a loaded
 * machine the sample's receive-to-delete (envelope, ledger, send, ledger) outlasted 2 s.
 */
async function withReceiveVisibility<T>(seconds: number, fn: () => Promise<T>): Promise<T> {
  const was = process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS;
  process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS = String(seconds);
  resetClients();
  try {
    return await fn();
  } finally {
    if (was === undefined) delete process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS;
    else process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS = was;
    resetClients();
  }
}

describe('SampleRedrive against the local stack', () => {
  useTransferStack();

  it('sends the sample to its own source queue byte-for-byte with the pipeline attributes, then deletes it from the DLQ', async () => {
    const body = '{"orderId":"o-1","note":"caf\u00e9 \u2603 \ud83d\ude80"}';
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'sample-dlq',
      sourceNames: ['sample-src'],
      messages: [
        {
          body,
          attributes: {
            tenant: { DataType: 'String', StringValue: 'acme' },
            blob: { DataType: 'Binary', BinaryValue: new Uint8Array([0, 255, 7]) },
          },
        },
        { body: 'second' },
        { body: 'third' },
      ],
      incidentId: 'inc-sample',
    });
    const result = await run({ plan: planFor(dlq, { sampleSize: 3 }), preflight: preflightSlot() });
    expect([result.sent, result.alreadySent, result.duplicateSendsPrevented]).toEqual([3, 0, 0]);
    expect(result.keys).toHaveLength(3);
    expect(result.verifyAfterSeconds).toBe(45);

    const delivered = await drain(sqsClient(), dlq.sources[0]?.url as string);
    const first = delivered.find((m) => m.Body === body);
    expect(first?.Body).toBe(body);
    expect(first?.MessageAttributes?.tenant?.StringValue).toBe('acme');
    expect([...(first?.MessageAttributes?.blob?.BinaryValue ?? [])]).toEqual([0, 255, 7]);
    expect(first?.MessageAttributes?.['redrive-count']).toMatchObject({
      DataType: 'Number',
      StringValue: '1',
    });
    expect(first?.MessageAttributes?.['redrive-id']?.StringValue).toBe('inc-sample');
    expect(result.keys).toContain(first?.MessageAttributes?.['idempotency-key']?.StringValue);
    expect((await queueDepth(sqsClient(), dlq.dlqUrl)).visible).toBe(0);

    const states = [];
    for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn)) states.push(e.state);
    expect(states).toEqual(['REDRIVEN', 'REDRIVEN', 'REDRIVEN']);
  });

  it('after a crash between send and delete, the retry deletes the DLQ copy without sending it again', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'crash-dlq',
      sourceNames: ['crash-src'],
      messages: Array.from({ length: 6 }, (_, i) => ({ body: `{"n":${i}}` })),
      incidentId: 'inc-crash',
    });
    const plan = planFor(dlq, { sampleSize: 3 });
    const crash = crashOnceAt('after-send');
    await expect(run({ plan, preflight: preflightSlot() })).rejects.toThrow('simulated crash after-send');
    const key = crash.crashedKey() as string;
    expect((await ledgerEntry(dlq.dlqArn, key))?.status).toBe('SENT');

    const retry = await run({ plan, preflight: preflightSlot() });
    expect(retry.duplicateSendsPrevented).toBe(1);
    expect(retry.sent).toBe(2);
    expect(retry.keys).toHaveLength(3);
    expect(retry.keys).toContain(key);

    const delivered = await drain(sqsClient(), dlq.sources[0]?.url as string);
    const keys = delivered.map((m) => m.MessageAttributes?.['idempotency-key']?.StringValue);
    expect(keys.filter((k) => k === key)).toHaveLength(1);
    expect(delivered).toHaveLength(3);
    const ledger = await ledgerEntry(dlq.dlqArn, key);
    expect([ledger?.dlqDeleted, ledger?.duplicatePrevented]).toEqual([true, true]);
    expect((await queueDepth(sqsClient(), dlq.dlqUrl)).visible).toBe(3);
  });

  it('after a crash between record and send, the retry sends the message exactly once', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'crash-record-dlq',
      sourceNames: ['crash-record-src'],
      messages: [{ body: 'only' }],
      incidentId: 'inc-crash-record',
    });
    const plan = planFor(dlq, { sampleSize: 1 });
    const crash = crashOnceAt('after-record');
    await expect(run({ plan, preflight: preflightSlot() })).rejects.toThrow('simulated crash after-record');
    expect((await ledgerEntry(dlq.dlqArn, crash.crashedKey() as string))?.status).toBe('IN_PROGRESS');
    const retry = await run({ plan, preflight: preflightSlot() });
    expect([retry.sent, retry.duplicateSendsPrevented]).toEqual([1, 0]);
    expect(await drain(sqsClient(), dlq.sources[0]?.url as string)).toHaveLength(1);
  });

  it("C08 keeps the FIFO MessageGroupId and sends with the ledger entry's deduplication id, so a resend is not delivered twice", async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'c08-sample-dlq.fifo',
      sourceNames: ['c08-sample-src.fifo'],
      messages: [{ body: '{"orderId":"o-7","step":2}', groupId: 'customer-42' }],
      incidentId: 'inc-c08-sample',
    });
    // As on a loaded machine: 2.5 s between the send and the delete, more than the file's 2 s.
    setTransferFaultHook(async (step) => {
      if (step === 'after-send') await new Promise((resolve) => setTimeout(resolve, 2500));
    });
    const result = await withReceiveVisibility(30, () =>
      run({ plan: planFor(dlq, { sampleSize: 1 }), preflight: preflightSlot(true) }),
    );
    expect(result.sent).toBe(1);
    const key = result.keys[0] as string;
    const recorded = (await ledgerEntry(dlq.dlqArn, key))?.deduplicationId as string;
    expect(recorded).toMatch(/^[0-9a-f]{32}$/);
    // The same sample sent again within the 5-minute window (as a resume after a crash would).
    await createTransferSqs().send(dlq.sources[0]?.url as string, {
      body: '{"orderId":"o-7","step":2}',
      attributes: {},
      groupId: 'customer-42',
      deduplicationId: recorded,
    });
    const delivered = await drain(sqsClient(), dlq.sources[0]?.url as string);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]?.Attributes?.MessageGroupId).toBe('customer-42');
    expect(delivered[0]?.Attributes?.MessageDeduplicationId).toBe(recorded);
    expect(recorded).not.toBe(fifoDeduplicationId(key));
  });

  it('a FIFO crash after SQS accepted the send, before the entry said SENT, recovered by a restart within 5 minutes, sends once: the recorded id is reused', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'fifo-crash-dlq.fifo',
      sourceNames: ['fifo-crash-src.fifo'],
      messages: [{ body: '{"orderId":"o-9"}', groupId: 'customer-9' }],
      incidentId: 'inc-fifo-crash',
    });
    const crash = crashOnceAt('after-send');
    await expect(
      withReceiveVisibility(2, () =>
        run({ plan: planFor(dlq, { sampleSize: 1 }), preflight: preflightSlot(true) }),
      ),
    ).rejects.toThrow('simulated crash after-send');
    const key = crash.crashedKey() as string;
    const first = await ledgerEntry(dlq.dlqArn, key);
    // The crash came after SQS accepted the copy and before SENT was written: the entry says IN_PROGRESS.
    await documentClient().send(
      new UpdateCommand({
        TableName: process.env.TABLE_NAME,
        Key: { pk: `DLQ#${dlq.dlqArn}`, sk: `LEDGER#${first?.dlqMessageId}` },
        UpdateExpression: 'SET #s = :p',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':p': 'IN_PROGRESS' },
      }),
    );
    // A restart (another run) once the crashed run's lease is over.
    const restart = await withReceiveVisibility(30, () =>
      run({
        plan: planFor(dlq, { sampleSize: 1, runId: 'inc-fifo-crash#2' }),
        preflight: preflightSlot(true),
      }),
    );
    const after = await ledgerEntry(dlq.dlqArn, key);
    expect([after?.resent, after?.takenOverFrom, after?.dlqDeleted]).toEqual([
      true,
      ['inc-fifo-crash'],
      true,
    ]);
    expect(after?.deduplicationId).toBe(first?.deduplicationId);
    expect(restart.keys).toEqual([key]);
    const delivered = await drain(sqsClient(), dlq.sources[0]?.url as string);
    expect(delivered.map((m) => m.Attributes?.MessageDeduplicationId)).toEqual([first?.deduplicationId]);
    expect((await queueDepth(sqsClient(), dlq.dlqUrl)).visible).toBe(0);
  });

  it('does not sample messages classified do-not-redrive', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'skip-dlq',
      sourceNames: ['skip-src'],
      messages: [
        { body: 'bad', attributes: { 'error-class': { DataType: 'String', StringValue: 'SyntaxError' } } },
        { body: 'good' },
      ],
      incidentId: 'inc-skip',
    });
    const result = await run({ plan: planFor(dlq, { sampleSize: 2 }), preflight: preflightSlot() });
    expect(result.sent).toBe(1);
    const delivered = await drain(sqsClient(), dlq.sources[0]?.url as string);
    expect(delivered.map((m) => m.Body)).toEqual(['good']);
    expect((await queueDepth(sqsClient(), dlq.dlqUrl)).visible).toBe(1);
  });

  it("N01 leaves a message whose copy exceeds the source queue's MaximumMessageSize in the DLQ, reports it and sends the others", async () => {
    // 984 bytes of body + the attribute "tenant" (6 + 6 + 4 bytes) = 1000 bytes: it fitted the
    // 1024-byte source queue when it first failed, not once our three attributes are added.
    const big = 'x'.repeat(984);
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'n01-size-dlq',
      sourceNames: ['n01-size-src'],
      messages: [
        { body: big, attributes: { tenant: { DataType: 'String', StringValue: 'acme' } } },
        { body: 'small' },
      ],
      incidentId: 'inc-n01-size',
    });
    const source = dlq.sources[0]?.url as string;
    await sqsClient().send(
      new SetQueueAttributesCommand({ QueueUrl: source, Attributes: { MaximumMessageSize: '1024' } }),
    );
    const result = await run({ plan: planFor(dlq, { sampleSize: 2 }), preflight: preflightSlot() });
    expect([result.sent, result.tooLarge, result.keys.length]).toEqual([1, 1, 1]);
    const [reported] = result.tooLargeMessages;
    expect(reported?.limitBytes).toBe(1024);
    expect(reported?.sizeBytes).toBeGreaterThan(1024);
    expect(reported?.destinationArn).toBe(dlq.sources[0]?.arn);
    expect((await drain(sqsClient(), source)).map((m) => m.Body)).toEqual(['small']);
    // The big one is still in the DLQ, IN_DLQ, with no ledger entry a retry would trip over.
    const states = new Map<string, string>();
    for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn)) states.set(e.messageId, e.state);
    expect(states.get(reported?.messageId as string)).toBe('IN_DLQ');
    const entries = (await createRedriveLedger().list(dlq.dlqArn)).filter(
      (e) => e.incidentId === 'inc-n01-size',
    );
    expect(entries.map((e) => e.dlqMessageId)).not.toContain(reported?.messageId);
    expect(entries).toHaveLength(1);
    const retried = await run({ plan: planFor(dlq, { sampleSize: 2 }), preflight: preflightSlot() });
    expect([retried.sent, retried.alreadySent, retried.tooLarge]).toEqual([0, 1, 1]);
    expect((await queueDepth(sqsClient(), dlq.dlqUrl)).visible).toBe(1);
  });
});

describe('outgoingSizeBytes', () => {
  it('N01 counts the body and every attribute name, data type and value in bytes, as SQS does', () => {
    expect(
      outgoingSizeBytes({
        body: '\u00e9', // 2 bytes
        attributes: {
          k: { DataType: 'String', StringValue: '\u00fc' }, // 1 + 6 + 2
          b: { DataType: 'Binary', BinaryValue: new Uint8Array([1, 2, 3]) }, // 1 + 6 + 3
          n: { DataType: 'Number.int', StringValue: '42' }, // 1 + 10 + 2
        },
      }),
    ).toBe(34);
  });
});
