/**
 * Test support for the redrive workflow's functions: a DLQ seeded by a real failing consumer
 * (`seed-dlq.ts`), its envelopes stored by the real inventory (`inventory.ts` + the envelope store),
 * and an `$.plan` for it.
 */
import { CreateQueueCommand, type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import type { ExecutionPlan } from '#incident/execution-input.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { inventoryDlq } from '#inventory/inventory.js';
import { QueueRegistration } from '#inventory/model.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createRedriveLedger, type LedgerEntry } from '#transfer/redrive-ledger.js';
import { type SeedDlqOptions, type SeededDlq, seedDlq } from './seed-dlq.js';
import { scaled } from './timeouts.js';

/** A seeded DLQ whose envelopes are stored. */
export interface InventoriedDlq extends SeededDlq {
  incidentId: string;
  envelopes: number;
}

/** Seeds the DLQ through a failing consumer, then stores its envelopes as triage would. */
export async function seedAndInventory(
  options: SeedDlqOptions & { incidentId: string },
): Promise<InventoriedDlq> {
  const seeded = await seedDlq(options);
  return inventoryAs(options.sqs, seeded, options.incidentId);
}

/** Stores the envelopes of what the DLQ holds now, as triage of incident `incidentId` would. */
export async function inventoryAs(
  sqs: SQSClient,
  seeded: SeededDlq,
  incidentId: string,
): Promise<InventoriedDlq> {
  const queues = createSqsQueues({ client: sqs });
  const dlq = await queues.describe(seeded.dlqUrl);
  const result = await inventoryDlq(
    {
      dlq,
      registration: QueueRegistration.parse({ dlqArn: seeded.dlqArn }),
      incidentId,
      waitTimeSeconds: 0,
    },
    { queues, envelopes: createEnvelopeStore(), remainingTimeMs: () => 60_000, now: Date.now },
  );
  return { ...seeded, incidentId, envelopes: result.written };
}

/** An `$.plan` for a seeded DLQ (defaults of a small, fast run). */
export function planFor(
  seeded: Pick<InventoriedDlq, 'dlqArn' | 'dlqUrl' | 'incidentId'>,
  overrides: Partial<ExecutionPlan> = {},
): ExecutionPlan {
  return {
    incidentId: seeded.incidentId,
    dlqArn: seeded.dlqArn,
    dlqUrl: seeded.dlqUrl,
    mode: 'redrive',
    destinationArn: null,
    allowCustomDestinationForSharedDlq: false,
    sampleSize: 2,
    rampRates: [5, 50],
    dwellSeconds: 60,
    verifyMarginSeconds: 0,
    discardPoison: false,
    preApproved: true,
    approvedBy: 'tester',
    requestedBy: 'test',
    parkingQueueUrl: null,
    maxRedrives: 3,
    ...overrides,
  };
}

/** Creates a plain queue (parking queue, custom destination). */
export async function createQueue(sqs: SQSClient, name: string, attributes: Record<string, string> = {}) {
  const out = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  return out.QueueUrl as string;
}

/** Receives (and leaves invisible for 60 s) every message currently visible in a queue. */
export async function drain(sqs: SQSClient, url: string): Promise<Message[]> {
  const all: Message[] = [];
  for (let empty = 0; empty < 2; ) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 60,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        AttributeNames: ['All'],
      }),
    );
    const batch = out.Messages ?? [];
    if (batch.length === 0) empty += 1;
    else all.push(...batch);
  }
  return all;
}

/**
 * A Lambda context good enough for middy handlers run in tests: 60 s left, scaled by the machine's
 * load like every other test timeout (the middleware turns the remaining time into the deadline of
 * every AWS call, so a loaded machine must not run a test out of invocation time).
 */
export const lambdaContext = {
  functionName: 'test',
  awsRequestId: 'req-1',
  getRemainingTimeInMillis: () => scaled(60_000),
} as unknown as Context;

/** The DLQ's ledger entry sent with idempotency key `key` (read consistently), if any. */
export async function ledgerEntry(dlqArn: string, key: string): Promise<LedgerEntry | undefined> {
  return (await createRedriveLedger().list(dlqArn)).find((e) => e.key === key);
}
