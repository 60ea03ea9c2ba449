/**
 * VerifySample: after the verification window (the workflow waits `$.sample.verifyAfterSeconds`,
 * the source's visibility timeout x maxReceiveCount plus a margin), checks that no sample message
 * came back to the DLQ and counts the samples consumers recorded as processed.
 *
 * The DLQ is peeked (received with a short visibility timeout and released at the end); a
 * message's key is its `idempotency-key` attribute (the sample send adds it and SQS keeps it when
 * the consumer fails the message again), else its envelope's key, else the shared derivation.
 * Any returned sample fails the verification: the run stops after the sample and nothing is
 * bulk-moved. Returned samples get new DLQ MessageIds; Reconcile's inventory stores their new
 * envelopes, linked to the old ones by the same idempotency key.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 */
import type { ProcessedKeysReader } from '#consumer/processed-keys.js';
import { ExecutionPlan } from '#incident/execution-input.js';
import { scanDlq, type VisitResult } from '#inventory/dlq-scan.js';
import type { EnvelopeStore } from '#inventory/envelope-store.js';
import { idempotencyKeyOfMessage } from '#inventory/idempotency-key.js';
import { queueDepth, type SqsQueues } from '#platform/sqs-queues.js';
import * as z from '#platform/zod.js';

/** Input of the VerifySample function. */
export const VerifySampleInput = z.object({
  plan: ExecutionPlan,
  sample: z.looseObject({
    redriveId: z.string(),
    sent: z.number().check(z.int(), z.gte(0)),
    alreadySent: z.number().check(z.int(), z.gte(0)),
    keys: z.array(z.string()),
    verifyAfterSeconds: z.number().check(z.gte(0)),
  }),
});
export type VerifySampleInput = z.infer<typeof VerifySampleInput>;

/** `$.verify` (docs/contracts.md). */
export interface VerifySampleResult {
  verdict: 'pass' | 'fail';
  /** Keys of sample messages found back in the DLQ. */
  returned: string[];
  /** Sample keys some consumer recorded as processed. */
  processed: number;
  /** Sample keys neither returned nor recorded as processed (consumer does not report keys, or still busy). */
  unknown: number;
  reason: string;
}

/** Ports of {@link verifySample}. */
export interface VerifySampleDeps {
  queues: Pick<SqsQueues, 'receive' | 'changeVisibility' | 'describe'>;
  envelopes: Pick<EnvelopeStore, 'getEnvelope'>;
  processed: Pick<ProcessedKeysReader, 'processedSince'>;
  /** Visibility timeout of the peek, seconds. @default 20 */
  peekVisibilityTimeoutSeconds?: number;
  /** Most messages peeked. @default 10000 */
  maxMessages?: number;
}

/**
 * Verifies the sample.
 * @throws TransientError on throttling/5xx (safe to retry: the peek releases what it held).
 */
export async function verifySample(
  input: VerifySampleInput,
  deps: VerifySampleDeps,
): Promise<VerifySampleResult> {
  const { plan, sample } = input;
  const sampleKeys = new Set(sample.keys);
  if (sampleKeys.size === 0) {
    const dlq = await deps.queues.describe(plan.dlqUrl);
    const left = queueDepth(dlq);
    return left === 0
      ? {
          verdict: 'pass',
          returned: [],
          processed: 0,
          unknown: 0,
          reason: 'nothing left in the DLQ after parking',
        }
      : {
          verdict: 'fail',
          returned: [],
          processed: 0,
          unknown: 0,
          reason: `no sample message could be sent although ${left} message(s) remain in the DLQ (none eligible: classified do-not-redrive, over maxRedrives, or unknown to triage)`,
        };
  }

  const returned = new Set<string>();
  const maxMessages = deps.maxMessages ?? 10_000;
  const peek = await scanDlq(
    deps.queues,
    {
      queueUrl: plan.dlqUrl,
      visibilityTimeoutSeconds: deps.peekVisibilityTimeoutSeconds ?? 20,
      maxMessages,
      // A returned sample is among the newest messages, behind the whole backlog: everything
      // peeked stays held until the end (the default 1000 would stop the peek in front of it).
      maxHeld: maxMessages,
      // Long poll before calling the DLQ empty: a short poll can answer empty while messages remain.
      waitTimeSeconds: 1,
      emptyReceives: 1,
    },
    async (batch) => {
      const results = new Map<string, VisitResult>();
      for (const message of batch) {
        results.set(message.MessageId as string, 'hold');
        let key = message.MessageAttributes?.['idempotency-key']?.StringValue;
        if (!key)
          key = (await deps.envelopes.getEnvelope(plan.dlqArn, message.MessageId as string))?.idempotencyKey;
        key ??= idempotencyKeyOfMessage(message).key;
        if (sampleKeys.has(key)) returned.add(key);
      }
      return { results, stop: returned.size === sampleKeys.size };
    },
  );

  // An explicit key's record counts whenever it was written (a copy of an already processed message
  // is skipped by the consumer, which is what "processed" means for it). A content-hash key's record
  // counts only for this run's copy (`RUN#<redriveId>`): one under `MSG#<id>` is another message
  // with the same body, or this message before it dead-lettered (docs/consumers.md).
  const recorded = await deps.processed.processedSince(
    [...sampleKeys].filter((key) => !returned.has(key)),
    new Date(0),
  );
  const thisRun = `RUN#${sample.redriveId}`;
  const processed = [...recorded.values()].filter((records) =>
    records.some((r) => r.lineage === null || r.lineage === thisRun),
  ).length;
  const unknown = sampleKeys.size - returned.size - processed;
  if (returned.size > 0) {
    return {
      verdict: 'fail',
      returned: [...returned],
      processed,
      unknown,
      reason: `${returned.size} of ${sampleKeys.size} sample message(s) came back to the DLQ during the verification window (planned ${sample.verifyAfterSeconds} s): the consumer still fails them; nothing was bulk-moved`,
    };
  }
  const partial = peek.truncated ? ` (peeked ${peek.received} messages, the DLQ holds more)` : '';
  return {
    verdict: 'pass',
    returned: [],
    processed,
    unknown,
    reason: `none of ${sampleKeys.size} sample message(s) came back during the verification window (planned ${sample.verifyAfterSeconds} s); ${processed} recorded as processed by a consumer, ${unknown} not reported${partial}`,
  };
}
