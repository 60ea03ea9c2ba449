/**
 * Test and bench support: envelopes of a big incident written straight to the pipeline table, the
 * way triage's inventory writes them (`buildEnvelope` on a received message, then the envelope
 * store's `putEnvelopes`), without SQS: the DLQ messages are those `npm start -- --dlq-depth N`
 * seeds (local/demo/seed.ts: the demo's orders, every 20th poison, with the `error-class` /
 * `error-message` attributes the failing consumer sets, dead-lettered from one source queue).
 * A 100,000-message DLQ's envelopes take minutes this way instead of the hour its SQS seeding and
 * inventory take, so the phases that read them (Preflight, Park, Reconcile) can be measured and
 * tested at that size.
 */
import type { Message } from '@aws-sdk/client-sqs';
import { buildEnvelope, type EnvelopeWrite } from '#inventory/envelope.js';
import type { EnvelopeStore } from '#inventory/envelope-store.js';
import { pool } from '#platform/dynamo-batches.js';
import type { QueueInfo, SqsQueues } from '#platform/sqs-queues.js';
import { order } from '../../local/demo/producer.js';

/** The failure reasons local/demo/seed.ts attaches. */
const POISON_FAILURE = { errorClass: 'ValidationError', message: 'quantity: expected a number' };
const OUTAGE_FAILURE = {
  errorClass: 'DependencyUnavailable',
  message: 'inventory service unavailable (503)',
};

/** Options of {@link bigIncidentEnvelopes}. */
export interface BigIncidentEnvelopes {
  dlqArn: string;
  sourceArn: string;
  /** Messages (envelopes) to build. */
  count: number;
  incidentId: string;
  /** Every n-th message is poison. @default 20 */
  poisonEvery?: number;
  /** Scan time, epoch milliseconds. @default Date.now() */
  now?: number;
  /** The DLQ's MessageRetentionPeriod, seconds. @default 1209600 (14 days) */
  retentionPeriodSeconds?: number;
}

/** The `i`-th dead-lettered order as ReceiveMessage returns it from the DLQ. */
export function deadLetteredOrder(i: number, options: BigIncidentEnvelopes): Message {
  const { id, poison, body } = order(i, { poisonEvery: options.poisonEvery ?? 20 });
  const failure = poison ? POISON_FAILURE : OUTAGE_FAILURE;
  const now = options.now ?? Date.now();
  // Sent over the last hour, oldest first: the earliest retention deadline is message 0's.
  const sent = now - 3_600_000 + Math.floor((i * 3_600_000) / Math.max(1, options.count));
  return {
    MessageId: `0000${id.slice(-4)}-0000-4000-8000-${String(i).padStart(12, '0')}`,
    ReceiptHandle: `rh-${i}`,
    Body: body,
    MD5OfBody: '',
    Attributes: {
      SenderId: 'AIDAEXAMPLE',
      SentTimestamp: String(sent),
      ApproximateReceiveCount: '4',
      ApproximateFirstReceiveTimestamp: String(sent + 1000),
      DeadLetterQueueSourceArn: options.sourceArn,
    },
    MessageAttributes: {
      'content-type': { DataType: 'String', StringValue: 'application/json' },
      'error-class': { DataType: 'String', StringValue: failure.errorClass },
      'error-message': { DataType: 'String', StringValue: failure.message },
    },
  };
}

/** The envelope writes of messages `from` (inclusive) to `to` (exclusive) of the incident. */
export function bigIncidentWrites(options: BigIncidentEnvelopes, from: number, to: number): EnvelopeWrite[] {
  const now = options.now ?? Date.now();
  const writes: EnvelopeWrite[] = [];
  for (let i = from; i < to; i++)
    writes.push(
      buildEnvelope(deadLetteredOrder(i, options), {
        dlqArn: options.dlqArn,
        fifo: false,
        retentionPeriodSeconds: options.retentionPeriodSeconds ?? 1_209_600,
        now,
        registration: {},
        incidentId: options.incidentId,
        inventory: { id: options.incidentId, step: Math.floor(i / 5000) },
      }),
    );
  return writes;
}

/**
 * Writes the incident's envelopes through the envelope store, 500 per `putEnvelopes` call, `parallel`
 * calls at a time.
 *
 * @returns envelopes created, and the wall time, milliseconds.
 * @throws Error when some envelopes stay unprocessed.
 */
export async function putBigIncidentEnvelopes(
  store: Pick<EnvelopeStore, 'putEnvelopes'>,
  options: BigIncidentEnvelopes,
  parallel = 2,
): Promise<{ created: number; ms: number }> {
  const t0 = performance.now();
  const groups: Array<[number, number]> = [];
  for (let i = 0; i < options.count; i += 500) groups.push([i, Math.min(options.count, i + 500)]);
  let created = 0;
  await pool(groups, parallel, async ([from, to]) => {
    const r = await store.putEnvelopes(bigIncidentWrites(options, from, to), { deadlineMs: 120_000 });
    if (r.unprocessed > 0) throw new Error(`${r.unprocessed} envelope(s) unprocessed`);
    created += r.created;
  });
  return { created, ms: performance.now() - t0 };
}

/**
 * Preflight's SQS port for the incident, answered from memory: the DLQ (`depth` messages) and its
 * one source queue (a RedrivePolicy to it, maxReceiveCount 3), both standard, 14 days' retention.
 * URLs are `http://sqs.local/<account>/<name>`.
 */
export function bigIncidentQueues(
  options: Pick<BigIncidentEnvelopes, 'dlqArn' | 'sourceArn'>,
  depth: number,
): Pick<SqsQueues, 'describe' | 'resolveByName' | 'listDeadLetterSourceQueues'> & {
  dlqUrl: string;
} {
  const urlOf = (arn: string) => {
    const [, , , , account, name] = arn.split(':');
    return `http://sqs.local/${account}/${name}`;
  };
  const info = (arn: string, visible: number): QueueInfo => ({
    url: urlOf(arn),
    arn,
    name: arn.split(':').pop() as string,
    fifo: false,
    retentionPeriodSeconds: 1_209_600,
    visibilityTimeoutSeconds: 30,
    visible,
    inFlight: 0,
    delayed: 0,
    delaySeconds: 0,
    maximumMessageSize: 1_048_576,
    redrivePolicy:
      arn === options.sourceArn ? { deadLetterTargetArn: options.dlqArn, maxReceiveCount: 3 } : null,
    attributes: {},
  });
  const dlq = info(options.dlqArn, depth);
  const source = info(options.sourceArn, 0);
  return {
    dlqUrl: dlq.url,
    describe: async (url) => (url === dlq.url ? dlq : source),
    resolveByName: async (name) => (name === source.name ? source : dlq),
    listDeadLetterSourceQueues: async () => [source.url],
  };
}
