/**
 * The middy middleware: consumer-side idempotency for an SQS-triggered Lambda function whose
 * handler returns a partial batch response (ReportBatchItemFailures).
 *
 * Per invocation:
 * 1. **before**: checks the event; derives each record's key (see `record.ts` for when two records
 *    are one message); claims every key in DynamoDB (a conditional put, `IN_PROGRESS` until the
 *    invocation's deadline). A record whose key is already processed is a duplicate: it is not
 *    passed to the handler and is reported as a success (SQS deletes it). A record whose key another
 *    invocation is working on, or whose claim or key derivation threw, fails on its own. A second
 *    record of the same message in the batch follows the first's outcome. The handler gets the
 *    rest, in the original order.
 * 2. **after**: the handler's response must be exactly `{ batchItemFailures: [{ itemIdentifier }] }`
 *    naming records it was given; anything else throws {@link InvalidBatchResponseError}, releases
 *    every claim and records nothing. Each success is recorded `COMPLETED` (with the record
 *    lifetime), each failure's claim released.
 * 3. **onError** (the handler threw): every claim is released, nothing is recorded, the error goes
 *    on to Lambda and the whole batch returns to the queue. To fail one record only, catch per
 *    record (see the examples) or use Powertools' batch processors.
 *
 * **FIFO queues** (the event source's name ends in `.fifo`): the first failure in a message group,
 * whether the middleware's or the handler's, fails every later record of that group in the batch:
 * they are not passed to the handler when the failure is known before it runs, never recorded, and
 * reported as failures, so SQS redelivers the group in order. Other groups go on. The middleware
 * cannot undo work a handler did after a failure in the same group: stop the group yourself, or use
 * Powertools' `SqsFifoPartialProcessorAsync` with `skipGroupOnError: true`.
 *
 * A success whose record cannot be written (DynamoDB unavailable) is still reported as a success:
 * the work is done and must not be repeated because of bookkeeping. It is listed in
 * `unrecorded` and logged with `logger.warn`; the claim lapses at the invocation's deadline.
 *
 * @example
 * ```ts
 * export const handler = middy<SQSEvent, SQSBatchResponse>()
 *   .use(consumerIdempotency({ consumer: 'orders-consumer', tableName: process.env.DLQ_REDRIVE_TABLE! }))
 *   .handler((event, context) => processPartialResponse(event, recordHandler, processor, { context }));
 * ```
 * @see https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html#services-sqs-batchfailurereporting
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-understanding-logic.html
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { MiddlewareObj } from '@middy/core';
import { InvalidOptionsError } from './errors.js';
import type { ProducerKey } from './key.js';
import { type RecordLifetimeOptions, resolveRecordLifetime } from './lifetime.js';
import {
  assertSqsEvent,
  failedIdsOf,
  fifoGroupOf,
  type RecordKey,
  recordKey,
  type SqsBatchResponse,
  type SqsEvent,
  type SqsRecord,
} from './record.js';
import { type Claim, createProcessedKeyStore, eachLimited, type ProcessedKeyStore } from './store.js';

/** Options of {@link consumerIdempotency}. */
export interface ConsumerIdempotencyOptions extends RecordLifetimeOptions {
  /**
   * A stable name of the consuming function (1-128 of `A-Z a-z 0-9 . _ : -`): part of the record's
   * sort key, and what the pipeline reports as the consumer that processed a key.
   */
  readonly consumer: string;
  /** The table the records go to: the dlq-redrive pipeline's table. Required unless `store` is given. */
  readonly tableName?: string;
  /** @default a `new DynamoDBClient({})` */
  readonly client?: DynamoDBClient;
  /** Another store (tests, another backend). @default the DynamoDB store on `tableName` */
  readonly store?: ProcessedKeyStore;
  /**
   * Where the producer's own id lives (a message attribute or a JSON path in the body). Use the
   * same as the queue's registration in the pipeline, so both derive the same keys.
   */
  readonly producerKey?: ProducerKey;
  /**
   * How long a claim lasts when the Lambda context cannot say how long the invocation has left,
   * seconds (1..900). @default 900 (Lambda's longest timeout)
   */
  readonly claimSeconds?: number;
  /** Claims and writes in flight at once. @default 10 */
  readonly concurrency?: number;
  /** @default console */
  readonly logger?: { warn(message: string, ...details: unknown[]): void };
  /** @default () => new Date() */
  readonly now?: () => Date;
}

/** Why a record failed before or instead of the handler. */
export interface RecordFailure {
  messageId: string;
  reason: string;
}

/** What the middleware decided in one invocation (for logs, metrics and tests). */
export interface ConsumerIdempotencyState {
  /** Key of each record, by messageId. */
  keys: Map<string, RecordKey>;
  /** Records not passed to the handler because their message was already processed (reported as successes). */
  skipped: string[];
  /** Records failed by the middleware, with why (reported as failures). */
  failed: RecordFailure[];
  /** Successes whose record could not be written. */
  unrecorded: string[];
}

type Outcome =
  | { kind: 'handler' }
  | { kind: 'duplicate' }
  | { kind: 'follows'; leader: number }
  | { kind: 'failed'; reason: string };

interface Planned {
  record: SqsRecord;
  group: string | undefined;
  key?: RecordKey;
  claim?: Claim;
  outcome: Outcome;
}

interface Invocation {
  planned: Planned[];
  state: ConsumerIdempotencyState;
  settled: boolean;
}

const CONSUMER_NAME = /^[A-Za-z0-9._:-]{1,128}$/;
const byContext = new WeakMap<object, ConsumerIdempotencyState>();

/** The middleware's decisions for the invocation whose Lambda context this is. */
export function consumerIdempotencyState(context: object): ConsumerIdempotencyState | undefined {
  return byContext.get(context);
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * Creates the middleware.
 * @throws InvalidOptionsError listing every unusable option (consumer name, table, lifetimes).
 */
export function consumerIdempotency(
  options: ConsumerIdempotencyOptions,
): MiddlewareObj<SqsEvent, SqsBatchResponse> {
  const problems: string[] = [];
  if (typeof options.consumer !== 'string' || !CONSUMER_NAME.test(options.consumer))
    problems.push(
      `consumer must be 1-128 characters of A-Z a-z 0-9 . _ : - (got ${JSON.stringify(options.consumer)})`,
    );
  if (options.store === undefined && !options.tableName)
    problems.push('tableName is required (the dlq-redrive table) unless a store is given');
  const claimSeconds = options.claimSeconds ?? 900;
  if (!Number.isSafeInteger(claimSeconds) || claimSeconds < 1 || claimSeconds > 900)
    problems.push(`claimSeconds must be whole seconds in 1..900 (got ${claimSeconds})`);
  const concurrency = options.concurrency ?? 10;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1)
    problems.push(`concurrency must be a whole number >= 1 (got ${concurrency})`);
  const { lifetime, problems: lifetimeProblems } = resolveRecordLifetime(options);
  problems.push(...lifetimeProblems);
  if (problems.length > 0) throw new InvalidOptionsError(problems);

  const store =
    options.store ??
    createProcessedKeyStore({
      tableName: options.tableName as string,
      ...(options.client ? { client: options.client } : {}),
    });
  const now = options.now ?? (() => new Date());
  const logger = options.logger ?? console;
  const invocations = new WeakMap<object, Invocation>();

  const release = async (planned: Planned[]) =>
    eachLimited(
      planned.filter((p) => p.claim),
      concurrency,
      async (p) => {
        await store.release(p.claim as Claim).catch(() => undefined); // a lost release lapses at the deadline
      },
    );

  const givenTo = (invocation: Invocation) =>
    new Set(invocation.planned.filter((p) => p.outcome.kind === 'handler').map((p) => p.record.messageId));

  /** Decides every record's final outcome (batch order), records successes, releases failures. */
  const settle = async (
    invocation: Invocation,
    handlerFailed: ReadonlySet<string>,
  ): Promise<SqsBatchResponse> => {
    invocation.settled = true;
    const { planned, state } = invocation;
    const failed = new Array<boolean>(planned.length).fill(false);
    const failedGroups = new Set<string>();
    const toComplete: Planned[] = [];
    const toRelease: Planned[] = [];
    planned.forEach((p, i) => {
      const o = p.outcome;
      let fails = false;
      if (o.kind === 'failed') fails = true;
      else if (o.kind === 'handler') fails = handlerFailed.has(p.record.messageId);
      else if (o.kind === 'follows' && failed[o.leader]) {
        fails = true;
        state.failed.push({
          messageId: p.record.messageId,
          reason: `same message as record ${planned[o.leader]?.record.messageId}, which failed`,
        });
      }
      if (!fails && p.group !== undefined && failedGroups.has(p.group)) {
        fails = true;
        state.failed.push({
          messageId: p.record.messageId,
          reason: `an earlier record of message group ${p.group} failed`,
        });
      } else if (!fails && o.kind === 'follows') state.skipped.push(p.record.messageId);
      failed[i] = fails;
      if (fails && p.group !== undefined) failedGroups.add(p.group);
      if (p.claim) (fails ? toRelease : toComplete).push(p);
    });

    const processedAt = now();
    const expiresAt = Math.floor(processedAt.getTime() / 1000) + lifetime.recordTtlSeconds;
    await eachLimited(toComplete, concurrency, async (p) => {
      let why = 'the claim lapsed and another invocation took the key';
      const recorded = await store
        .complete(p.claim as Claim, processedAt, expiresAt)
        .catch((error: unknown) => {
          why = describe(error);
          return false;
        });
      if (recorded) return;
      state.unrecorded.push(p.record.messageId);
      logger.warn(
        `consumer-idempotency: record ${p.record.messageId} was processed but its key ${p.key?.key} could not be recorded (${why}); a later copy will be processed again`,
      );
    });
    await release(toRelease);
    return {
      batchItemFailures: planned
        .filter((_, i) => failed[i])
        .map((p) => ({ itemIdentifier: p.record.messageId })),
    };
  };

  return {
    name: 'consumerIdempotency',
    before: async (request) => {
      assertSqsEvent(request.event);
      const context = request.context as object & { getRemainingTimeInMillis?: () => number };
      const startedMs = now().getTime();
      const remainingMs =
        typeof context.getRemainingTimeInMillis === 'function'
          ? context.getRemainingTimeInMillis()
          : claimSeconds * 1000;
      const until = Math.ceil((startedMs + remainingMs) / 1000);
      const nowSeconds = Math.floor(startedMs / 1000);

      const planned: Planned[] = [];
      const firstOf = new Map<string, number>();
      for (const record of request.event.Records) {
        const p: Planned = { record, group: fifoGroupOf(record), outcome: { kind: 'handler' } };
        planned.push(p);
        try {
          p.key = recordKey(record, options.producerKey);
        } catch (error) {
          p.outcome = { kind: 'failed', reason: `no idempotency key: ${describe(error)}` };
          continue;
        }
        // Same message twice in one batch (same messageId, or same key and lineage): once only.
        const leader =
          firstOf.get(`id\0${record.messageId}`) ?? firstOf.get(`key\0${p.key.key}\0${p.key.lineage}`);
        if (leader !== undefined) {
          p.outcome = { kind: 'follows', leader };
          continue;
        }
        firstOf.set(`id\0${record.messageId}`, planned.length - 1);
        firstOf.set(`key\0${p.key.key}\0${p.key.lineage}`, planned.length - 1);
        p.claim = {
          consumer: options.consumer,
          key: p.key.key,
          keySource: p.key.keySource,
          lineage: p.key.lineage,
          messageId: record.messageId,
          token: randomUUID(),
          until,
        };
      }

      await eachLimited(
        planned.filter((p) => p.claim),
        concurrency,
        async (p) => {
          const claim = p.claim as Claim;
          try {
            const found = await store.claim(claim, nowSeconds);
            if (found.status === 'claimed') return;
            delete p.claim;
            p.outcome =
              found.status === 'processed'
                ? { kind: 'duplicate' }
                : {
                    kind: 'failed',
                    reason: `key ${claim.key} is being processed by another invocation (record ${found.messageId}, claim until ${new Date(found.until * 1000).toISOString()})`,
                  };
          } catch (error) {
            delete p.claim;
            p.outcome = { kind: 'failed', reason: `could not claim key ${claim.key}: ${describe(error)}` };
          }
        },
      );

      // FIFO: nothing after a known failure in its group goes to the handler.
      const failedGroups = new Set<string>();
      const dropped: Planned[] = [];
      for (const p of planned) {
        if (p.group === undefined) continue;
        if (failedGroups.has(p.group)) {
          if (p.claim) dropped.push(p);
          p.outcome = { kind: 'failed', reason: `an earlier record of message group ${p.group} failed` };
        } else if (p.outcome.kind === 'failed') failedGroups.add(p.group);
      }
      await release(dropped);
      for (const p of dropped) delete p.claim;

      const state: ConsumerIdempotencyState = {
        keys: new Map(planned.flatMap((p) => (p.key ? [[p.record.messageId, p.key] as const] : []))),
        skipped: planned.filter((p) => p.outcome.kind === 'duplicate').map((p) => p.record.messageId),
        failed: planned.flatMap((p) =>
          p.outcome.kind === 'failed' ? [{ messageId: p.record.messageId, reason: p.outcome.reason }] : [],
        ),
        unrecorded: [],
      };
      const invocation: Invocation = { planned, state, settled: false };
      invocations.set(request, invocation);
      byContext.set(context, state);
      const records = planned.filter((p) => p.outcome.kind === 'handler').map((p) => p.record);
      // Nothing left to process: answer without calling the handler (middy's early response).
      if (records.length === 0) return settle(invocation, new Set());
      request.event = { ...request.event, Records: records };
      return undefined;
    },

    after: async (request) => {
      const invocation = invocations.get(request);
      if (!invocation || invocation.settled) return;
      let handlerFailed: Set<string>;
      try {
        handlerFailed = failedIdsOf(request.response, givenTo(invocation));
      } catch (error) {
        invocation.settled = true;
        await release(invocation.planned);
        throw error;
      }
      request.response = await settle(invocation, handlerFailed);
    },

    onError: async (request) => {
      const invocation = invocations.get(request);
      if (!invocation || invocation.settled) return;
      invocation.settled = true;
      await release(invocation.planned);
    },
  };
}
