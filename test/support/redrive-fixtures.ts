/**
 * Test support for the redrive workflow's functions: a DLQ seeded by a real failing consumer
 * (`seed-dlq.ts`), its envelopes stored by the real inventory (`inventory.ts` + the envelope store),
 * and an `$.plan` for it.
 */
import { CreateQueueCommand, type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import type { ExecutionPlan } from '#incident/execution-input.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { type InventoryResult, inventoryDlq } from '#inventory/inventory.js';
import { QueueRegistration } from '#inventory/model.js';
import { sleep } from '#platform/sleep.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { createRedriveLedger, type LedgerEntry } from '#transfer/redrive-ledger.js';
import { handler as moverHandler } from '../../functions/mover/handler.js';
import type { MoverSampleResult, MoverState } from '../../functions/mover/mover.js';
import { type SeedDlqOptions, type SeededDlq, seedDlq } from './seed-dlq.js';
import { scaled } from './timeouts.js';

/** A seeded DLQ whose envelopes are stored. */
export interface InventoriedDlq extends SeededDlq {
  incidentId: string;
  envelopes: number;
  /** What the inventory run did (its envelopes, stop reason...). */
  inventory: InventoryResult;
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
  return { ...seeded, incidentId, envelopes: result.written, inventory: result };
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
    inventoryId: null,
    historyEventLimit: 25_000,
    continuation: 0,
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

/**
 * The recording mover's MoverSample, then MoverStep until it is done or halts (drains waited for,
 * as the ASL's Wait does), through the real handler.
 * @param preflight - `$.preflight` as the mover reads it. @default a 1 s return window, standard queue
 */
export async function runMover(
  plan: ExecutionPlan,
  preflight: { verifyWindowSeconds: number; fifo: boolean } = { verifyWindowSeconds: 1, fifo: false },
): Promise<{ sample: MoverSampleResult; state: MoverState }> {
  const invoke = (event: unknown) => moverHandler(event as never, lambdaContext) as Promise<unknown>;
  const sample = (await invoke({ action: 'sample', plan, preflight })) as MoverSampleResult;
  let state: MoverState | undefined;
  for (let i = 0; i < 60; i += 1) {
    state = (await invoke({ action: 'step', plan, preflight, sample, mover: state })) as MoverState;
    if (state.decision === 'done' || state.decision === 'halt') break;
    if (state.decision === 'drain') await sleep(state.waitSeconds * 1000);
  }
  return { sample, state: state as MoverState };
}
