/**
 * Hostile conditions for SampleRedrive and the Reconcile that follows it, against the local stack:
 * a sample held invisible by someone else when the retry runs, a step that died between
 * DeleteMessage and the ledger update, and a resend after a crash between record and send.
 */
import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sqsClient } from '#platform/clients.js';
import { sleep } from '#platform/sleep.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createTransferSqs, setTransferFaultHook } from '#transfer/message-transfer.js';
import { createRedriveLedger } from '#transfer/redrive-ledger.js';
import { handler as reconcileHandler } from '../../functions/reconcile/handler.js';
import type { ReconcileResult } from '../../functions/reconcile/reconcile.js';
import { handler as sampleHandler } from '../../functions/sample-redrive/handler.js';
import { type SampleRedriveResult, sampleRedrive } from '../../functions/sample-redrive/sample-redrive.js';
import { handler as verifyHandler } from '../../functions/verify-sample/handler.js';
import type { VerifySampleResult } from '../../functions/verify-sample/verify-sample.js';
import {
  createQueue,
  drain,
  lambdaContext,
  ledgerEntry,
  planFor,
  seedAndInventory,
} from '../support/redrive-fixtures.js';
import { queueDepth } from '../support/seed-dlq.js';
import { scaled } from '../support/timeouts.js';
import { holdAll, useTransferStack } from '../support/transfer-stack.js';

const sample = (event: unknown) =>
  sampleHandler(event as never, lambdaContext) as Promise<SampleRedriveResult>;

describe('SampleRedrive and Reconcile under hostile conditions', () => {
  useTransferStack();

  it(
    'SampleRedrive retry does not return while a message it already sent is held invisible by someone else',
    async () => {
      const dlq = await seedAndInventory({
        sqs: sqsClient(),
        dlqName: 'hostile-sample-dlq',
        sourceNames: ['hostile-sample-src'],
        messages: [{ body: 'only' }],
        incidentId: 'inc-hostile-sample',
      });
      const plan = planFor(dlq, { sampleSize: 1 });
      let crashedKey: string | undefined;
      setTransferFaultHook((step, key) => {
        if (step === 'after-send' && !crashedKey) {
          crashedKey = key;
          throw new Error('simulated crash after-send');
        }
      });
      const preflight = { verifyWindowSeconds: 10, fifo: false };
      await expect(sample({ plan, preflight })).rejects.toThrow('simulated crash');
      setTransferFaultHook(undefined);
      // The crashed receive's 2 s end; then someone polls the DLQ in the console and holds it 4 s.
      await sleep(2100);
      expect(await holdAll(dlq.dlqUrl, 4)).toBe(1);
      const retry = await sample({ plan, preflight });
      expect(retry.duplicateSendsPrevented).toBe(1);
      const entry = await ledgerEntry(dlq.dlqArn, crashedKey as string);
      expect(entry?.dlqDeleted).toBe(true);
      const depth = await queueDepth(sqsClient(), dlq.dlqUrl);
      expect(depth.visible + depth.inFlight).toBe(0);
      expect(await drain(sqsClient(), dlq.sources[0]?.url as string)).toHaveLength(1);
    },
    scaled(60_000),
  );

  it(
    'a sample whose DLQ copy was deleted just before the step died is counted as redriven by Reconcile, not lost',
    async () => {
      const dlq = await seedAndInventory({
        sqs: sqsClient(),
        dlqName: 'hostile-deleted-dlq',
        sourceNames: ['hostile-deleted-src'],
        messages: [{ body: '{"a":1}' }, { body: '{"a":2}' }],
        incidentId: 'inc-hostile-deleted',
      });
      const plan = planFor(dlq, { sampleSize: 1, mode: 'sample-only' });
      const preflight = { verifyWindowSeconds: 0, fifo: false };
      // DeleteMessage succeeded, then the invocation died before the ledger recorded it.
      const ledger = createRedriveLedger();
      const dying = {
        ...ledger,
        markDeleted: async () => {
          throw new Error('simulated crash between delete and ledger update');
        },
      };
      const ports = {
        queues: createSqsQueues(),
        envelopes: createEnvelopeStore(),
        sqs: createTransferSqs(),
        visibilityTimeoutSeconds: 2,
      };
      await expect(sampleRedrive({ plan, preflight }, { ...ports, ledger: dying })).rejects.toThrow(
        'simulated crash',
      );
      const retry = await sample({ plan, preflight });
      expect([retry.sent, retry.alreadySent, retry.keys.length]).toEqual([0, 1, 1]);
      const result = (await reconcileHandler(
        { plan, outcome: 'sample-only' } as never,
        lambdaContext,
      )) as ReconcileResult;
      expect(result).toMatchObject({ inventoried: 2, redriven: 1, inDlq: 1, missing: 0, balanced: true });
      expect(await drain(sqsClient(), dlq.sources[0]?.url as string)).toHaveLength(1);
    },
    scaled(60_000),
  );

  it(
    'a resend after a crash between record and send is recorded in the ledger and reported by Reconcile as a possible duplicate',
    async () => {
      const dlq = await seedAndInventory({
        sqs: sqsClient(),
        dlqName: 'hostile-resend-dlq',
        sourceNames: ['hostile-resend-src'],
        messages: [{ body: '{"r":1}' }],
        incidentId: 'inc-hostile-resend',
      });
      const plan = planFor(dlq, { sampleSize: 1, mode: 'sample-only' });
      const preflight = { verifyWindowSeconds: 0, fifo: false };
      // Dies after the ledger entry: whether SQS got the send is unknown to the retry.
      let crashedKey: string | undefined;
      setTransferFaultHook((step, key) => {
        if (step === 'after-record' && !crashedKey) {
          crashedKey = key;
          throw new Error('simulated crash after-record');
        }
      });
      await expect(sample({ plan, preflight })).rejects.toThrow('simulated crash');
      setTransferFaultHook(undefined);
      expect((await ledgerEntry(dlq.dlqArn, crashedKey as string))?.resent).toBe(false);
      await sample({ plan, preflight });
      expect((await ledgerEntry(dlq.dlqArn, crashedKey as string))?.resent).toBe(true);
      const result = (await reconcileHandler(
        { plan, outcome: 'sample-only' } as never,
        lambdaContext,
      )) as ReconcileResult;
      expect(result).toMatchObject({ redriven: 1, missing: 0, possibleDuplicateSends: 1, balanced: true });
    },
    scaled(30_000),
  );

  it(
    'VerifySample finds a returned sample behind more than a thousand other DLQ messages',
    async () => {
      const dlqUrl = await createQueue(sqsClient(), 'hostile-verify-dlq');
      for (let i = 0; i < 1100; i += 10)
        await sqsClient().send(
          new SendMessageBatchCommand({
            QueueUrl: dlqUrl,
            Entries: Array.from({ length: 10 }, (_, j) => ({ Id: String(j), MessageBody: `{"n":${i + j}}` })),
          }),
        );
      // The sample came back last, as SQS dead-letters it: with the pipeline's idempotency-key.
      await sqsClient().send(
        new SendMessageCommand({
          QueueUrl: dlqUrl,
          MessageBody: '{"sample":1}',
          MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: 'k-returned' } },
        }),
      );
      const plan = planFor({
        dlqArn: 'arn:aws:sqs:us-east-1:000000000000:hostile-verify-dlq',
        dlqUrl,
        incidentId: 'inc-hostile-verify',
      });
      const sampleSlot = {
        redriveId: 'inc-hostile-verify',
        sent: 1,
        alreadySent: 0,
        keys: ['k-returned'],
        verifyAfterSeconds: 0,
      };
      const result = (await verifyHandler(
        { plan, sample: sampleSlot } as never,
        lambdaContext,
      )) as VerifySampleResult;
      expect([result.verdict, result.returned]).toEqual(['fail', ['k-returned']]);
    },
    scaled(60_000),
  );
});
