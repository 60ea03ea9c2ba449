/**
 * Park gathers the messages it parks across receives (batches of 10). A gathered message whose
 * visibility timeout ends before its batch is moved (a scan slower than Park's receive visibility)
 * is received again by the same scan with a new receipt handle. SQS deletes a message only with
 * its most recent receipt handle: with an older one DeleteMessage(Batch) succeeds and the message
 * may stay (API_DeleteMessage). The delete stand-in below answers as SQS does; the local stand-in
 * deletes with any handle of a standard queue, so it would hide the difference.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessage.html
 */
import { ChangeMessageVisibilityCommand, DeleteMessageBatchCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { sqsClient } from '#platform/clients.js';
import { createRedriveLedger } from '#transfer/redrive-ledger.js';
import { createParkDeps } from '../../functions/park/deps.js';
import { ParkInput, park } from '../../functions/park/park.js';
import { createQueue, drain, planFor, seedAndInventory } from '../support/redrive-fixtures.js';
import { useTransferStack } from '../support/transfer-stack.js';

const badPayload = { 'error-class': { DataType: 'String', StringValue: 'SyntaxError' } };

describe('Park: a gathered message received again before its batch moves', () => {
  useTransferStack();

  it('is deleted with its latest receipt handle: it leaves the DLQ, parked once', async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'pstale-dlq',
      sourceNames: ['pstale-src'],
      messages: [
        { body: 'poison-0', attributes: badPayload },
        ...Array.from({ length: 25 }, (_, i) => ({ body: `fine-${i}` })),
        { body: 'poison-1', attributes: badPayload },
      ],
      incidentId: 'inc-pstale',
    });
    const parking = await createQueue(sqsClient(), 'pstale-parking');
    const plan = planFor(dlq, { parkingQueueUrl: parking });
    const deps = createParkDeps();
    // The latest receipt handle of each MessageId, and the MessageId of each handle.
    const latest = new Map<string, string>();
    const idOf = new Map<string, string>();
    let expired: string | undefined;
    const stale: string[] = [];
    const sqsLike = createParkDeps({
      overrides: {
        queues: {
          ...deps.queues,
          receive: async (url, opts) => {
            const batch = await deps.queues.receive(url, opts);
            for (const m of batch) {
              latest.set(m.MessageId as string, m.ReceiptHandle as string);
              idOf.set(m.ReceiptHandle as string, m.MessageId as string);
            }
            // poison-0's visibility ends while Park looks for the next message to park.
            const first = batch.find((m) => m.Body === 'poison-0');
            if (!expired && first) {
              expired = first.MessageId;
              await sqsClient().send(
                new ChangeMessageVisibilityCommand({
                  QueueUrl: url,
                  ReceiptHandle: first.ReceiptHandle,
                  VisibilityTimeout: 0,
                }),
              );
            }
            return batch;
          },
        },
        sqs: {
          ...deps.sqs,
          // As SQS: an older receipt handle "succeeds" and deletes nothing.
          deleteBatch: async (url, handles) => {
            const current = handles.filter((h) => latest.get(idOf.get(h) as string) === h);
            stale.push(...handles.filter((h) => !current.includes(h)));
            if (current.length > 0)
              await sqsClient().send(
                new DeleteMessageBatchCommand({
                  QueueUrl: url,
                  Entries: current.map((h, i) => ({ Id: String(i), ReceiptHandle: h })),
                }),
              );
            return new Set<string>();
          },
        },
      },
    });

    const result = await park(ParkInput.parse({ plan }), sqsLike);

    expect(expired).toBeDefined();
    expect(result.parked).toBe(2);
    expect(stale).toEqual([]);
    const parked = (await drain(sqsClient(), parking)).map((m) => m.Body).sort();
    expect(parked).toEqual(['poison-0', 'poison-1']);
    const left = (await drain(sqsClient(), dlq.dlqUrl)).map((m) => m.Body);
    expect(left.filter((b) => b?.startsWith('poison-'))).toEqual([]);
    expect(left).toHaveLength(25);
    const ledger = await createRedriveLedger().list(dlq.dlqArn);
    expect(ledger.every((e) => e.status === 'SENT' && e.dlqDeleted)).toBe(true);
  });
});
