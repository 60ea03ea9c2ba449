/**
 * Triage benchmark on the local stack (`npm run bench`).
 *
 * Fills a DLQ with N messages (default 5,000) the way production does (a failing consumer, SQS
 * dead-letters them), then measures in the same run:
 * 1. the triage core (inventory + envelopes + incident), first sight of every message;
 * 2. the same triage again for a new alarm transition (every envelope already exists: updates);
 * 3. a bare loop on the same stack that only receives (10 per call, held) and batch-writes
 *    (25 per call) minimal items, then releases: the floor triage is compared with.
 *
 * Prints messages/s and API calls per message for each, and the ratios. Numbers are for this
 * machine and the local stand-ins; compare ratios, not absolute rates.
 *
 * Usage: npx tsx bench/triage/run.ts [messages]
 */

import { createIncidentStore } from '#incident/incident-store.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { createInventorySessionStore } from '#inventory/inventory-session.js';
import { dynamoClient, sqsClient } from '#platform/clients.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { normaliseAlarmEvent } from '../../functions/triage/alarm-event.js';
import { triage } from '../../functions/triage/triage.js';
import { startLocalStack } from '../../local/stack.js';
import { queueDepth, seedDlq } from '../../test/support/seed-dlq.js';
import { apiCallMeter, bareLoop, orderMessages, printMeasures, rate } from '../support/measure.js';

const N = Number(process.argv[2] ?? 5000);
const ACCOUNT = '111122223333';

const meter = apiCallMeter();

function alarm(timestamp: string) {
  return normaliseAlarmEvent({
    'detail-type': 'CloudWatch Alarm State Change',
    source: 'aws.cloudwatch',
    account: ACCOUNT,
    resources: [`arn:aws:cloudwatch:us-east-1:${ACCOUNT}:alarm:bench-dlq-not-empty`],
    detail: {
      alarmName: 'bench-dlq-not-empty',
      state: { value: 'ALARM', reason: 'bench', timestamp },
      configuration: { metrics: [{ metricStat: { metric: { dimensions: { QueueName: 'bench-dlq' } } } }] },
    },
  });
}

async function main() {
  const stack = await startLocalStack({ accountId: ACCOUNT });
  try {
    meter.count(sqsClient(), 'sqs');
    meter.count(dynamoClient(), 'dynamo');
    const seedStart = performance.now();
    const seeded = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'bench-dlq',
      sourceNames: ['bench-queue'],
      maxReceiveCount: 1,
      timeoutMs: 600_000,
      messages: orderMessages(N, (i) => ({
        errorClass: i % 3 === 0 ? 'TimeoutError' : 'ValidationError',
        errorMessage: `failed on order o-${i} after ${i % 7} retries`,
      })),
    });
    console.log(
      `seeded ${N} messages into bench-dlq via a failing consumer in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`,
    );

    const deps = {
      queues: createSqsQueues(),
      envelopes: createEnvelopeStore(),
      sessions: createInventorySessionStore(),
      incidents: createIncidentStore(),
      registry: createQueueRegistry(),
      workflow: { startWorkflow: async () => ({ executionArn: 'arn:bench', alreadyStarted: false }) },
      now: () => Date.now(),
      remainingTimeMs: () => 900_000,
      config: {
        budgets: { messageBudget: N * 2, pageBudget: 100_000, safetyMarginMs: 15_000 },
        alarmQueueMap: {},
      },
      log: { info: () => undefined, warn: () => undefined },
    };
    const first = await meter.measure('triage, first sight (new envelopes)', async () => {
      const r = await triage(alarm('2026-01-02T10:35:00.000+0000'), deps);
      return r.queues[0]?.summary?.messageCount ?? 0;
    });
    console.log('DLQ after first triage:', await queueDepth(sqsClient(), seeded.dlqUrl));
    const again = await meter.measure('triage, next transition (envelopes exist)', async () => {
      const r = await triage(alarm('2026-01-02T11:35:00.000+0000'), deps);
      return r.queues[0]?.summary?.messageCount ?? 0;
    });

    console.log('DLQ after second triage:', await queueDepth(sqsClient(), seeded.dlqUrl));
    const bare = await meter.measure('bare loop: receive 10 + BatchWrite 25', async () => {
      const { seen, releaseFailures } = await bareLoop({
        dlqUrl: seeded.dlqUrl,
        tableName: stack.tableName,
        visibilityTimeoutSeconds: 900,
      });
      if (releaseFailures > 0) console.log(`bare loop: ${releaseFailures} of ${seen} releases failed`);
      return seen;
    });

    const depth = await queueDepth(sqsClient(), seeded.dlqUrl);
    printMeasures([first, again, bare]);
    console.log(`ratio triage(first sight) / bare loop = ${(rate(first) / rate(bare)).toFixed(2)}`);
    console.log(`ratio triage(envelopes exist) / bare loop = ${(rate(again) / rate(bare)).toFixed(2)}`);
    console.log(
      `DLQ after all runs: ${depth.visible} visible, ${depth.inFlight} in flight (expected ${N}, 0)`,
    );
  } finally {
    await stack.stop();
  }
}

await main();
