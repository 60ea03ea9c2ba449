/**
 * Recording mover benchmark on the local stack (`npm run bench:mover`).
 *
 * Fills two DLQs with the same N messages (default 1,000) the way production does (a failing
 * consumer; SQS dead-letters them), inventories the first as triage would (envelopes exist), then
 * measures in the same run:
 * 1. the recording mover (MoverStep's core with the function's own ports: per batch of ten, the
 *    envelope lookup, ledger entries with the idempotency keys, SendMessageBatch to the source
 *    queue, DeleteMessageBatch, ledger and envelope updates) moving the whole first DLQ back to its
 *    source queue at the top rate (500 msg/s, the most a plan may ask);
 * 2. a bare loop on the same stack over the second DLQ: ReceiveMessage (10), SendMessageBatch,
 *    DeleteMessageBatch, nothing recorded: the floor the mover is compared with.
 *
 * Prints messages/s and SQS and DynamoDB calls per message of each, and the throughput ratio
 * mover / bare loop. Numbers are for this machine and the local stand-ins; compare ratios.
 *
 * Usage: npx tsx bench/mover/run.ts [messages]
 */
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { inventoryDlq } from '#inventory/inventory.js';
import { QueueRegistration } from '#inventory/model.js';
import { dynamoClient, sqsClient } from '#platform/clients.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createMoverDeps } from '../../functions/mover/deps.js';
import { type MoverState, moverStep } from '../../functions/mover/mover.js';
import { startLocalStack } from '../../local/stack.js';
import { planFor } from '../../test/support/redrive-fixtures.js';
import { queueDepth, seedDlq } from '../../test/support/seed-dlq.js';
import { apiCallMeter, orderMessages, printMeasures, rate } from '../support/measure.js';

const N = Number(process.argv[2] ?? 1000);
const ACCOUNT = '111122223333';

const meter = apiCallMeter();
const messages = orderMessages(N, (i) => ({
  errorClass: 'TimeoutError',
  errorMessage: `upstream timed out on order o-${i}`,
}));

async function main() {
  const stack = await startLocalStack({ accountId: ACCOUNT });
  try {
    const sqs = sqsClient();
    const seed = (name: string) =>
      seedDlq({
        sqs,
        dlqName: `${name}-dlq`,
        sourceNames: [`${name}-src`],
        maxReceiveCount: 1,
        timeoutMs: 600_000,
        messages,
      });
    const [moverDlq, bareDlq] = [await seed('bench-mover'), await seed('bench-bare')];
    const queues = createSqsQueues({ client: sqs });
    const inventory = await inventoryDlq(
      {
        dlq: await queues.describe(moverDlq.dlqUrl),
        registration: QueueRegistration.parse({ dlqArn: moverDlq.dlqArn }),
        incidentId: 'bench-mover',
        waitTimeSeconds: 0,
      },
      { queues, envelopes: createEnvelopeStore(), remainingTimeMs: () => 600_000, now: Date.now },
    );
    console.log(`seeded ${N} messages into each DLQ; ${inventory.written} envelopes stored`);
    meter.count(sqs, 'sqs');
    meter.count(dynamoClient(), 'dynamo');

    const bare = await meter.measure(
      'bare loop: receive 10, SendMessageBatch, DeleteMessageBatch',
      async () => {
        let moved = 0;
        for (let empty = 0; empty < 2; ) {
          const out = await sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: bareDlq.dlqUrl,
              MaxNumberOfMessages: 10,
              VisibilityTimeout: 60,
              WaitTimeSeconds: 0,
              MessageAttributeNames: ['All'],
              MessageSystemAttributeNames: ['All'],
              AttributeNames: ['All'],
            }),
          );
          const batch = out.Messages ?? [];
          if (batch.length === 0) {
            empty += 1;
            continue;
          }
          await sqs.send(
            new SendMessageBatchCommand({
              QueueUrl: bareDlq.sources[0]?.url,
              Entries: batch.map((m, i) => ({
                Id: String(i),
                MessageBody: m.Body,
                MessageAttributes: m.MessageAttributes,
              })),
            }),
          );
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: bareDlq.dlqUrl,
              Entries: batch.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
            }),
          );
          moved += batch.length;
        }
        return moved;
      },
    );

    // Do-not-redrive messages (the seeded poison) are not selected: they stay in the DLQ.
    let notSelected = 0;
    const mover = await meter.measure('recording mover (MoverStep, 500 msg/s top rate)', async () => {
      const plan = planFor(
        { dlqArn: moverDlq.dlqArn, dlqUrl: moverDlq.dlqUrl, incidentId: 'bench-mover' },
        { rampRates: [500], dwellSeconds: 3600 },
      );
      const deps = createMoverDeps({ getRemainingTimeInMillis: () => 900_000 });
      let state: MoverState | undefined;
      for (let i = 0; i < 20; i += 1) {
        state = await moverStep(
          { action: 'step', plan, preflight: { verifyWindowSeconds: 0, fifo: false }, mover: state },
          deps,
        );
        if (state.decision !== 'continue') break;
      }
      notSelected = state?.notSelected ?? 0;
      return state?.moved ?? 0;
    });

    printMeasures([bare, mover]);
    console.log(`ratio mover / bare loop (throughput) = ${(rate(mover) / rate(bare)).toFixed(2)}`);
    console.log(
      `API calls per message: mover ${((mover.sqs + mover.dynamo) / mover.messages).toFixed(2)}, bare loop ${((bare.sqs + bare.dynamo) / bare.messages).toFixed(2)}`,
    );
    const left = await queueDepth(sqs, moverDlq.dlqUrl);
    console.log(
      `mover DLQ after the run: ${left.visible} visible, ${left.inFlight} in flight (expected ${notSelected} visible, the messages it did not select, and 0 in flight)`,
    );
  } finally {
    await stack.stop();
  }
}

await main();
