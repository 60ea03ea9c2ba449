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
 * "Not seen" is not "not there": a peek stops on its budget, and SQS answers a receive empty
 * while messages it cannot hand out remain (held in flight by another receiver, delayed, or past
 * the ~120,000 in-flight limit). So a pass needs evidence for every sample key: either the peek saw
 * the whole DLQ (it did not stop on a budget and received at least the depth, visible + in flight +
 * delayed, the DLQ reported before it), or a consumer recorded the key as processed. Otherwise the
 * verdict is `inconclusive`: the workflow waits `retryAfterSeconds` and runs the check again
 * (`ReverifySample`, with `previous`), and the last of `maxAttempts` attempts ends `fail` with the
 * reason, so the bulk move never starts on an unverified sample.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 */
import type { Message } from '@aws-sdk/client-sqs';
import type { ProcessedKeysReader } from '#consumer/processed-keys.js';
import { ExecutionPlan } from '#incident/execution-plan.js';
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
  /** The previous attempt's `$.verify` when the workflow retries an inconclusive verification. */
  previous: z.optional(z.looseObject({ attempt: z.number().check(z.int(), z.gte(1)) })),
});
export type VerifySampleInput = z.infer<typeof VerifySampleInput>;

/** `$.verify` (docs/contracts.md). */
export interface VerifySampleResult {
  /** `inconclusive`: neither pass nor fail could be shown; the workflow checks again after `retryAfterSeconds`. */
  verdict: 'pass' | 'fail' | 'inconclusive';
  /** Keys of sample messages found back in the DLQ. */
  returned: string[];
  /** Sample keys some consumer recorded as processed. */
  processed: number;
  /** Sample keys neither returned nor recorded as processed (consumer does not report keys, or still busy). */
  unknown: number;
  reason: string;
  /** This attempt, 1-based. */
  attempt: number;
  /** Attempts allowed before an inconclusive verification ends `fail`. */
  maxAttempts: number;
  /** Wait before the next attempt (inconclusive only), seconds. */
  retryAfterSeconds: number;
  /** DLQ messages the peek received. */
  peeked: number;
  /** DLQ depth (visible + in flight + delayed) just before the peek. */
  dlqDepth: number;
}

/** Ports of {@link verifySample}. */
export interface VerifySampleDeps {
  queues: Pick<SqsQueues, 'receive' | 'changeVisibility' | 'describe'>;
  envelopes: Pick<EnvelopeStore, 'getEnvelopes'>;
  processed: Pick<ProcessedKeysReader, 'processedSince'>;
  /** Visibility timeout of the peek, seconds. @default 20 */
  peekVisibilityTimeoutSeconds?: number;
  /** Most messages peeked. @default 10000 */
  maxMessages?: number;
  /** Attempts of an inconclusive verification before it ends `fail`. @default 3 */
  maxAttempts?: number;
}

/** Peeked messages whose envelopes one lookup reads: BatchGetItem's 100 keys. */
const ENVELOPE_LOOKUP_BATCH = 100;

/** Wait between inconclusive attempts, seconds: one more verification window, within 1..900. */
export function reverifyAfterSeconds(verifyAfterSeconds: number): number {
  return Math.min(900, Math.max(1, Math.ceil(verifyAfterSeconds)));
}

/**
 * Verifies the sample: `pass` only with evidence for every sample key, `fail` when one came back
 * (or, on the last attempt, when some could not be settled), else `inconclusive`.
 * @throws TransientError on throttling/5xx (safe to retry: the peek releases what it held).
 */
export async function verifySample(
  input: VerifySampleInput,
  deps: VerifySampleDeps,
): Promise<VerifySampleResult> {
  const { plan, sample } = input;
  const sampleKeys = new Set(sample.keys);
  const maxAttempts = deps.maxAttempts ?? 3;
  const attempt = (input.previous?.attempt ?? 0) + 1;
  const retryAfterSeconds = reverifyAfterSeconds(sample.verifyAfterSeconds);
  const dlqDepth = queueDepth(await deps.queues.describe(plan.dlqUrl));
  const base = { attempt, maxAttempts, retryAfterSeconds: 0, dlqDepth };
  if (sampleKeys.size === 0) {
    const none = { ...base, returned: [], processed: 0, unknown: 0, peeked: 0 };
    return dlqDepth === 0
      ? { ...none, verdict: 'pass', reason: 'nothing left in the DLQ after parking' }
      : {
          ...none,
          verdict: 'fail',
          reason: `no sample message could be sent although ${dlqDepth} message(s) remain in the DLQ (none eligible: classified do-not-redrive, over maxRedrives, or unknown to triage)`,
        };
  }

  const returned = new Set<string>();
  const maxMessages = deps.maxMessages ?? 10_000;
  // Peeked messages without an `idempotency-key` attribute: their envelopes are looked up 100 at a
  // time (one BatchGetItem), not one GetItem each.
  const unkeyed: Message[] = [];
  const lookUp = async (count: number) => {
    const batch = unkeyed.splice(0, count);
    if (batch.length === 0) return;
    const stored = await deps.envelopes.getEnvelopes(
      plan.dlqArn,
      batch.map((m) => m.MessageId as string),
    );
    for (const message of batch) {
      const key =
        stored.get(message.MessageId as string)?.idempotencyKey ?? idempotencyKeyOfMessage(message).key;
      if (sampleKeys.has(key)) returned.add(key);
    }
  };
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
        const key = message.MessageAttributes?.['idempotency-key']?.StringValue;
        if (!key) unkeyed.push(message);
        else if (sampleKeys.has(key)) returned.add(key);
      }
      while (unkeyed.length >= ENVELOPE_LOOKUP_BATCH) await lookUp(ENVELOPE_LOOKUP_BATCH);
      return { results, stop: returned.size === sampleKeys.size };
    },
  );
  await lookUp(unkeyed.length);

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
  const counts = { ...base, returned: [...returned], processed, unknown, peeked: peek.received };
  if (returned.size > 0) {
    return {
      ...counts,
      verdict: 'fail',
      reason: `${returned.size} of ${sampleKeys.size} sample message(s) came back to the DLQ during the verification window (planned ${sample.verifyAfterSeconds} s): the consumer still fails them; nothing was bulk-moved`,
    };
  }
  const sawWholeDlq = !peek.truncated && peek.received >= dlqDepth;
  if (sawWholeDlq || unknown === 0) {
    const how = sawWholeDlq
      ? `the peek saw all ${dlqDepth} DLQ message(s)`
      : `the peek saw ${peek.received} of ${dlqDepth} DLQ message(s), every unseen sample recorded as processed`;
    return {
      ...counts,
      verdict: 'pass',
      reason: `none of ${sampleKeys.size} sample message(s) came back during the verification window (planned ${sample.verifyAfterSeconds} s): ${how}; ${processed} recorded as processed by a consumer, ${unknown} not reported`,
    };
  }
  const why = `the peek saw ${peek.received} of ${dlqDepth} DLQ message(s)${peek.truncated ? ` (stopped on its budget of ${maxMessages})` : ' (the rest held in flight by another receiver, delayed, or not handed out)'} and ${unknown} of ${sampleKeys.size} sample message(s) were neither seen nor recorded as processed by a consumer`;
  return attempt < maxAttempts
    ? {
        ...counts,
        retryAfterSeconds,
        verdict: 'inconclusive',
        reason: `verification inconclusive (attempt ${attempt} of ${maxAttempts}): ${why}; checking again in ${retryAfterSeconds} s`,
      }
    : {
        ...counts,
        verdict: 'fail',
        reason: `sample not verified after ${attempt} attempt(s): ${why}; a sample that may have come back is not a pass, so nothing was bulk-moved`,
      };
}
