/**
 * Processed-key records in DynamoDB: the item layout, the writer the middleware uses (claim,
 * complete, release) and the reader the dlq-redrive pipeline uses ("was key K processed since T?").
 *
 * ## Items (in the pipeline's table, so the pipeline finds them from the key alone)
 *
 * | pk            | sk                                   | when                                 |
 * | ------------- | ------------------------------------ | ------------------------------------ |
 * | `KEY#<key>`   | `PROCESSED#<consumer>`               | explicit key (producer id, pipeline key, SNS MessageId) |
 * | `KEY#<key>`   | `PROCESSED#<consumer>#<lineage>`     | content-hash key, per lineage (`MSG#<messageId>`, `RUN#<redriveId>`) |
 *
 * Attributes: `entity` = `processed`, `key`, `consumer`, `keySource`, `lineage` (absent for an
 * explicit key), `status` (`IN_PROGRESS` while a consumer works on it, then `COMPLETED`),
 * `messageId` (of the record that claimed it), `claimToken` (while IN_PROGRESS), `claimedAt` and
 * `processedAt` (ISO-8601), `expiresAt` (epoch seconds, the table's TTL attribute): the claim's
 * deadline while IN_PROGRESS, processedAt + the record lifetime once COMPLETED.
 *
 * **Expiry is decided on read.** An item whose `expiresAt` has passed is absent for every reader
 * and claim, whether or not DynamoDB's TTL sweeper (which can lag by days) has deleted it yet.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 */
import {
  type AttributeValue,
  DeleteItemCommand,
  DynamoDBClient,
  PutItemCommand,
  QueryCommand,
  type QueryCommandOutput,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { KeySource } from './key.js';

/** The partition key of every record of `key`. */
export const keyPartition = (key: string): string => `KEY#${key}`;
/** Prefix of every processed-key sort key. */
export const PROCESSED_PREFIX = 'PROCESSED#';

/** The primary key of the record of `key` by `consumer` (lineage `null` for an explicit key). */
export function processedItemKey(
  consumer: string,
  key: string,
  lineage: string | null,
): { pk: string; sk: string } {
  return {
    pk: keyPartition(key),
    sk: `${PROCESSED_PREFIX}${consumer}${lineage === null ? '' : `#${lineage}`}`,
  };
}

/** A claim on one record's key, held while the handler works on it. */
export interface Claim {
  consumer: string;
  key: string;
  keySource: KeySource;
  lineage: string | null;
  /** The record that claims it. */
  messageId: string;
  /** Unique per claim: only its holder completes or releases it. */
  token: string;
  /** When the claim lapses (the invocation's deadline), epoch seconds. */
  until: number;
}

/** What {@link ProcessedKeyStore.claim} found. */
export type ClaimResult =
  | { status: 'claimed' }
  /** Already processed (and not expired): the record is a duplicate. */
  | { status: 'processed'; processedAt: string; messageId: string }
  /** Another invocation holds a live claim: retry later. */
  | { status: 'in-progress'; until: number; messageId: string };

/** The writer side, as the middleware uses it. */
export interface ProcessedKeyStore {
  /** Claims the key unless a live record exists. `now` is epoch seconds. */
  claim(claim: Claim, now: number): Promise<ClaimResult>;
  /**
   * Marks the claimed key processed at `processedAt`, living until `expiresAt` (epoch seconds).
   * @returns false when the claim was lost (it lapsed and another invocation took the key).
   */
  complete(claim: Claim, processedAt: Date, expiresAt: number): Promise<boolean>;
  /** Gives the claim up (the record failed), so a retry can claim the key at once. */
  release(claim: Claim): Promise<void>;
}

/** A processed-key record as the reader returns it. */
export interface ProcessedRecord {
  key: string;
  consumer: string;
  keySource: KeySource;
  lineage: string | null;
  messageId: string;
  /** ISO-8601. */
  processedAt: string;
  /** Epoch seconds. */
  expiresAt: number;
}

/** The reader side, as the pipeline uses it (contract in the pipeline's docs/contracts.md). */
export interface ProcessedKeysReader {
  /**
   * The live COMPLETED records of each of `keys` processed at or after `since`, by any consumer (or
   * only `options.consumer`). Keys without such a record are absent from the map. One Query per
   * distinct key (paginated), at most `concurrency` at a time.
   */
  processedSince(
    keys: readonly string[],
    since: Date,
    options?: { consumer?: string },
  ): Promise<Map<string, ProcessedRecord[]>>;
}

/** Where the records live. */
export interface ProcessedKeysTableOptions {
  /** The table (the dlq-redrive pipeline's table, so the pipeline reads what consumers record). */
  tableName: string;
  /** @default a `new DynamoDBClient({})`, created on first use */
  client?: DynamoDBClient;
  /** @default () => new Date() */
  now?: () => Date;
}

function lazyClient(client: DynamoDBClient | undefined): () => DynamoDBClient {
  let made: DynamoDBClient | undefined = client;
  return () => {
    made ??= new DynamoDBClient({});
    return made;
  };
}

function isConditionFailure(error: unknown): error is Error & { Item?: Record<string, AttributeValue> } {
  return (error as { name?: unknown } | null)?.name === 'ConditionalCheckFailedException';
}

const s = (value: string): AttributeValue => ({ S: value });
const n = (value: number): AttributeValue => ({ N: String(value) });

/**
 * The DynamoDB writer. Claims are conditional puts (`attribute_not_exists(pk) OR expiresAt <=
 * now`, so an expired item is overwritten like a missing one); completion and release are
 * conditional on the claim's token.
 */
export function createProcessedKeyStore(options: ProcessedKeysTableOptions): ProcessedKeyStore {
  const client = lazyClient(options.client);
  const TableName = options.tableName;
  const itemKey = (c: Claim) => {
    const { pk, sk } = processedItemKey(c.consumer, c.key, c.lineage);
    return { pk: s(pk), sk: s(sk) };
  };
  return {
    async claim(c, now) {
      const item: Record<string, AttributeValue> = {
        ...itemKey(c),
        entity: s('processed'),
        key: s(c.key),
        consumer: s(c.consumer),
        keySource: s(c.keySource),
        status: s('IN_PROGRESS'),
        messageId: s(c.messageId),
        claimToken: s(c.token),
        claimedAt: s(new Date(now * 1000).toISOString()),
        expiresAt: n(c.until),
      };
      if (c.lineage !== null) item.lineage = s(c.lineage);
      try {
        await client().send(
          new PutItemCommand({
            TableName,
            Item: item,
            ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :now',
            ExpressionAttributeValues: { ':now': n(now) },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { status: 'claimed' };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        const old = error.Item ?? {};
        const messageId = old.messageId?.S ?? '';
        if (old.status?.S === 'COMPLETED')
          return { status: 'processed', processedAt: old.processedAt?.S ?? '', messageId };
        return { status: 'in-progress', until: Number(old.expiresAt?.N ?? 0), messageId };
      }
    },
    async complete(c, processedAt, expiresAt) {
      try {
        await client().send(
          new UpdateItemCommand({
            TableName,
            Key: itemKey(c),
            UpdateExpression:
              'SET #status = :completed, processedAt = :at, expiresAt = :exp REMOVE claimToken',
            ConditionExpression: 'claimToken = :token',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':completed': s('COMPLETED'),
              ':at': s(processedAt.toISOString()),
              ':exp': n(expiresAt),
              ':token': s(c.token),
            },
          }),
        );
        return true;
      } catch (error) {
        if (isConditionFailure(error)) return false;
        throw error;
      }
    },
    async release(c) {
      try {
        await client().send(
          new DeleteItemCommand({
            TableName,
            Key: itemKey(c),
            ConditionExpression: 'claimToken = :token',
            ExpressionAttributeValues: { ':token': s(c.token) },
          }),
        );
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    },
  };
}

/** Runs `work` over `items`, at most `limit` at a time. */
export async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/**
 * The DynamoDB reader.
 * @param options.concurrency - Queries in flight at once. @default 8
 */
export function createProcessedKeysReader(
  options: ProcessedKeysTableOptions & { concurrency?: number },
): ProcessedKeysReader {
  const client = lazyClient(options.client);
  const now = options.now ?? (() => new Date());
  return {
    async processedSince(keys, since, filter = {}) {
      const found = new Map<string, ProcessedRecord[]>();
      const nowSeconds = Math.floor(now().getTime() / 1000);
      await eachLimited([...new Set(keys)], options.concurrency ?? 8, async (key) => {
        const records: ProcessedRecord[] = [];
        let start: Record<string, AttributeValue> | undefined;
        do {
          const out: QueryCommandOutput = await client().send(
            new QueryCommand({
              TableName: options.tableName,
              KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
              FilterExpression: `#status = :completed AND expiresAt > :now AND processedAt >= :since${filter.consumer === undefined ? '' : ' AND consumer = :consumer'}`,
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: {
                ':pk': s(keyPartition(key)),
                ':prefix': s(PROCESSED_PREFIX),
                ':completed': s('COMPLETED'),
                ':now': n(nowSeconds),
                ':since': s(since.toISOString()),
                ...(filter.consumer === undefined ? {} : { ':consumer': s(filter.consumer) }),
              },
              ...(start ? { ExclusiveStartKey: start } : {}),
            }),
          );
          for (const item of out.Items ?? [])
            records.push({
              key: item.key?.S ?? key,
              consumer: item.consumer?.S ?? '',
              keySource: (item.keySource?.S ?? 'hash') as KeySource,
              lineage: item.lineage?.S ?? null,
              messageId: item.messageId?.S ?? '',
              processedAt: item.processedAt?.S ?? '',
              expiresAt: Number(item.expiresAt?.N ?? 0),
            });
          start = out.LastEvaluatedKey;
        } while (start);
        if (records.length > 0) found.set(key, records);
      });
      return found;
    },
  };
}
