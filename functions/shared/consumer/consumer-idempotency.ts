/**
 * Consumer-side idempotency for SQS-triggered Lambda consumers: a middy middleware that skips
 * records whose idempotency key this consumer has already processed and records each key after
 * success, so a redrive (sample, move task, or a resend after a crash) never makes a consumer
 * apply the same message twice.
 *
 * - Key: the `idempotency-key` message attribute the pipeline adds on redrive, else the shared
 *   derivation of `idempotency-key.ts` (producer id, SNS MessageId, or the SHA-256 over the source
 *   queue ARN, body and sorted attributes), so a message that never went through the DLQ and its
 *   later redriven copy get the same key.
 * - Record: `KEY#<key>` / `PROCESSED#<consumer>` in the pipeline table, written with
 *   `attribute_not_exists(pk)` after the record succeeded. VerifySample reads these records to count
 *   processed samples.
 * - Partial batch responses (ReportBatchItemFailures): records the handler lists in
 *   `batchItemFailures` are not recorded; records skipped as already processed are not passed to
 *   the handler and are reported as successes (deleted by the event source mapping).
 *
 * Why not Powertools idempotency: its DynamoDB persistence layer keys an item by
 * `<function name>#<hash of the payload>` (or a static partition key plus that id as sort key) and
 * owns the item's status/expiry attributes. Our record must live at `KEY#<idempotency key>` /
 * `PROCESSED#<consumer>` so the workflow can find it from the key alone, across functions and
 * without knowing how a consumer hashes payloads; that layout cannot be configured there.
 *
 * @example
 * ```ts
 * export const handler = middy<SQSEvent, SQSBatchResponse>()
 *   .use(consumerIdempotency({ consumer: 'orders-consumer' }))
 *   .handler(async (event, context) => processPartialResponse(event, recordHandler, processor, { context }));
 * ```
 * @see https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html#services-sqs-batchfailurereporting
 * @see https://docs.powertools.aws.dev/lambda/typescript/latest/features/idempotency/
 */
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import type { MiddlewareObj } from '@middy/core';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { idempotencyKeyOfMessage, setOwn } from '#inventory/idempotency-key.js';
import type { QueueRegistration } from '#inventory/model.js';
import { documentClient } from '#platform/clients.js';
import { awsErrorName } from '#platform/errors.js';
import { DEFAULT_TABLE_NAME, keys } from '#platform/table.js';

/** Reads and writes `KEY#<key>` / `PROCESSED#<consumer>` records. */
export interface ProcessedKeys {
  /** The keys among `keys` that `consumer` has processed (BatchGetItem, 100 per call). */
  processedBy(consumer: string, keys: readonly string[]): Promise<Set<string>>;
  /** Records that `consumer` processed `key`. @returns false when it was already recorded. */
  markProcessed(consumer: string, key: string, details: { messageId: string }): Promise<boolean>;
  /** Every consumer that recorded `key` as processed. */
  consumersOf(key: string): Promise<string[]>;
}

/**
 * Creates the processed-keys store.
 * @param options.client - @default the shared document client
 * @param options.tableName - @default process.env.TABLE_NAME ?? 'dlq-redrive'
 */
export function createProcessedKeys(
  options: { client?: DynamoDBDocumentClient; tableName?: string; now?: () => Date } = {},
): ProcessedKeys {
  const client = () => options.client ?? documentClient();
  const table = () => options.tableName ?? process.env.TABLE_NAME ?? DEFAULT_TABLE_NAME;
  return {
    async processedBy(consumer, wanted) {
      const found = new Set<string>();
      const unique = [...new Set(wanted)];
      for (let i = 0; i < unique.length; i += 100) {
        let request: Record<string, { Keys: Record<string, unknown>[] }> | undefined = {
          [table()]: {
            Keys: unique
              .slice(i, i + 100)
              .map((k) => ({ pk: keys.idempotencyKey(k), sk: keys.processed(consumer) })),
          },
        };
        for (let attempt = 0; request && attempt < 8; attempt++) {
          const out: BatchGetCommandOutput = await client().send(
            new BatchGetCommand({ RequestItems: request }),
          );
          for (const item of out.Responses?.[table()] ?? []) found.add(String(item.key));
          const rest = out.UnprocessedKeys?.[table()]?.Keys as Record<string, unknown>[] | undefined;
          request = rest?.length ? { [table()]: { Keys: rest } } : undefined;
          if (request) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
        }
      }
      return found;
    },
    async markProcessed(consumer, key, details) {
      try {
        await client().send(
          new PutCommand({
            TableName: table(),
            Item: {
              pk: keys.idempotencyKey(key),
              sk: keys.processed(consumer),
              entity: 'processed',
              key,
              consumer,
              messageId: details.messageId,
              processedAt: (options.now ? options.now() : new Date()).toISOString(),
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return true;
      } catch (error) {
        if (awsErrorName(error) === 'ConditionalCheckFailedException') return false;
        throw error;
      }
    },
    async consumersOf(key) {
      const out = await client().send(
        new QueryCommand({
          TableName: table(),
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
          ExpressionAttributeValues: { ':pk': keys.idempotencyKey(key), ':p': 'PROCESSED#' },
        }),
      );
      return (out.Items ?? []).map((item) => String(item.consumer));
    },
  };
}

/**
 * The idempotency key of an SQS record in a Lambda event: the `idempotency-key` attribute when the
 * pipeline set one, else the shared derivation with the consumed queue as source.
 */
export function idempotencyKeyOfRecord(
  record: SQSRecord,
  producerKey?: QueueRegistration['producerKey'],
): string {
  const attached = record.messageAttributes?.['idempotency-key']?.stringValue;
  if (attached) return attached;
  const attributes: Record<string, { DataType: string; StringValue?: string; BinaryValue?: Uint8Array }> = {};
  for (const [name, a] of Object.entries(record.messageAttributes ?? {})) {
    setOwn(attributes, name, {
      DataType: a.dataType,
      ...(a.stringValue !== undefined ? { StringValue: a.stringValue } : {}),
      ...(a.binaryValue !== undefined ? { BinaryValue: Buffer.from(a.binaryValue, 'base64') } : {}),
    });
  }
  return idempotencyKeyOfMessage(
    { Body: record.body, MessageAttributes: attributes, Attributes: {} },
    { sourceArn: record.eventSourceARN, ...(producerKey ? { producerKey } : {}) },
  ).key;
}

/** Options of {@link consumerIdempotency}. */
export interface ConsumerIdempotencyOptions {
  /** A stable name of the consuming function (part of the record's sort key). */
  consumer: string;
  /** @default createProcessedKeys() */
  store?: ProcessedKeys;
  /** Where the producer's own id lives, as in the queue registration. */
  producerKey?: QueueRegistration['producerKey'];
}

/** What the middleware keeps between `before` and `after`, readable by the handler. */
export interface ConsumerIdempotencyState {
  /** MessageIds skipped because their key was already processed. */
  skipped: string[];
  /** Key of each record passed to the handler, by MessageId. */
  keys: Map<string, string>;
}

const STATE = Symbol.for('dlq-redrive.consumer-idempotency');

/** The middleware's per-invocation state (for logging or tests). */
export function consumerIdempotencyState(context: object): ConsumerIdempotencyState | undefined {
  return (context as Record<symbol, ConsumerIdempotencyState | undefined>)[STATE];
}

/**
 * The middleware. Use it before a batch handler that returns `{ batchItemFailures }`.
 * If the handler throws, nothing is recorded (the whole batch returns to the queue).
 */
export function consumerIdempotency(
  options: ConsumerIdempotencyOptions,
): MiddlewareObj<SQSEvent, SQSBatchResponse | undefined> {
  const store = () => options.store ?? createProcessedKeys();
  return {
    before: async (request) => {
      const records = request.event.Records ?? [];
      const keyed = records.map((r) => ({ record: r, key: idempotencyKeyOfRecord(r, options.producerKey) }));
      const done = await store().processedBy(
        options.consumer,
        keyed.map((k) => k.key),
      );
      const state: ConsumerIdempotencyState = { skipped: [], keys: new Map() };
      const keep: SQSRecord[] = [];
      // A key seen twice in one batch (duplicate delivery) goes to the handler once.
      const inBatch = new Set<string>();
      for (const { record, key } of keyed) {
        if (done.has(key) || inBatch.has(key)) {
          state.skipped.push(record.messageId);
          continue;
        }
        inBatch.add(key);
        state.keys.set(record.messageId, key);
        keep.push(record);
      }
      (request.context as unknown as Record<symbol, ConsumerIdempotencyState>)[STATE] = state;
      request.event = { ...request.event, Records: keep };
    },
    after: async (request) => {
      const state = consumerIdempotencyState(request.context);
      if (!state) return;
      const failed = new Set((request.response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
      for (const [messageId, key] of state.keys) {
        if (failed.has(messageId)) continue;
        await store().markProcessed(options.consumer, key, { messageId });
      }
      request.response = { batchItemFailures: request.response?.batchItemFailures ?? [] };
    },
  };
}
