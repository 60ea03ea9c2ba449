/**
 * DynamoDB's batch APIs with the retries they need: `UnprocessedItems` / `UnprocessedKeys`, and
 * statements answered with an error, are sent again with exponential backoff and full jitter until
 * none are left or a deadline passes; what is left is returned, never dropped.
 * Retryable SDK failures (throttling, 5xx) of a whole call count as "all unprocessed"; anything
 * else is thrown.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchExecuteStatement.html
 * @see https://docs.aws.amazon.com/general/latest/gr/api-retries.html (exponential backoff and jitter)
 */
import {
  BatchExecuteStatementCommand,
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { isRetryable } from './errors.js';
import { sleep } from './sleep.js';

/** A DynamoDB item as the document client reads and writes it. */
export type Item = Record<string, unknown>;
/** One put of a BatchWriteItem. */
export type WriteRequest = { PutRequest: { Item: Item } };
/** One PartiQL statement of a BatchExecuteStatement. */
export type Statement = { Statement: string; Parameters: unknown[] };

/** Items per BatchWriteItem call (the API's limit). */
const WRITE_BATCH = 25;
/** Statements per BatchExecuteStatement call (the API's limit). */
const STATEMENT_BATCH = 25;
// 16 MB request limit: stay under it whatever the item sizes are.
const MAX_BATCH_BYTES = 12 * 1024 * 1024;

/** Options of {@link createDynamoBatches}. */
export interface DynamoBatchesOptions {
  client: () => DynamoDBDocumentClient;
  table: string;
  /** Backoff between rounds, milliseconds. @default { baseMs: 50, maxMs: 2000 } */
  backoff?: { baseMs: number; maxMs: number };
  /** Calls in flight at once. @default 4 */
  concurrency?: number;
}

/** Batch calls on one table, each retried until done or `deadline` (epoch milliseconds). */
export interface DynamoBatches {
  /** BatchWriteItem of every request; returns the requests still unprocessed at the deadline. */
  write(requests: readonly WriteRequest[], deadline: number): Promise<WriteRequest[]>;
  /**
   * BatchGetItem of `keys` (at most 100) with `projection` (undefined: whole items); returns the
   * items found and the keys still unprocessed at the deadline.
   */
  get<K extends Item>(
    keys: readonly K[],
    projection: string | undefined,
    deadline: number,
  ): Promise<{ items: Item[]; unchecked: K[] }>;
  /**
   * BatchExecuteStatement of one statement per entry; returns the entries whose statement failed
   * its condition (`ConditionalCheckFailed`: for a PartiQL UPDATE, no such item) and those still
   * not done at the deadline.
   */
  execute<U>(
    entries: readonly U[],
    statementOf: (entry: U) => Statement,
    deadline: number,
  ): Promise<{ conditionFailed: U[]; left: U[] }>;
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function pool<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  });
  await Promise.all(workers);
}

/** Rough DynamoDB size of an item, bytes (names + values); enough to keep requests under 16 MB. */
export function itemBytes(item: Item): number {
  let n = 0;
  for (const [k, v] of Object.entries(item)) {
    n += k.length;
    if (v instanceof Uint8Array) n += v.byteLength;
    else if (typeof v === 'string') n += Buffer.byteLength(v);
    else n += Buffer.byteLength(JSON.stringify(v) ?? '');
  }
  return n;
}

/** Splits requests into batches of at most 25 and under the request byte limit. */
function toBatches(requests: readonly WriteRequest[]): WriteRequest[][] {
  const batches: WriteRequest[][] = [];
  let current: WriteRequest[] = [];
  let bytes = 0;
  for (const r of requests) {
    const size = itemBytes(r.PutRequest.Item);
    if (current.length === WRITE_BATCH || (current.length > 0 && bytes + size > MAX_BATCH_BYTES)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(r);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

function slices<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The batch calls of one table over the given client. */
export function createDynamoBatches(options: DynamoBatchesOptions): DynamoBatches {
  const { client, table } = options;
  const backoff = options.backoff ?? { baseMs: 50, maxMs: 2000 };
  const concurrency = options.concurrency ?? 4;

  /** Full-jitter backoff before round `attempt + 1`, never past the deadline. */
  const delay = (attempt: number, deadline: number) => {
    const cap = Math.min(backoff.maxMs, backoff.baseMs * 2 ** attempt);
    return Math.max(0, Math.min(Math.random() * cap, deadline - Date.now()));
  };

  /** Rounds of `send` over what is pending, until nothing is or the deadline passes. */
  async function rounds<T>(
    first: readonly T[],
    deadline: number,
    send: (pending: readonly T[]) => Promise<T[]>,
  ): Promise<T[]> {
    let pending = [...first];
    for (let attempt = 0; pending.length > 0; attempt++) {
      pending = await send(pending);
      if (pending.length === 0 || Date.now() >= deadline) break;
      await sleep(delay(attempt, deadline));
    }
    return pending;
  }

  return {
    write(requests, deadline) {
      return rounds(requests, deadline, async (pending) => {
        const next: WriteRequest[] = [];
        await pool(toBatches(pending), concurrency, async (batch) => {
          try {
            const out = await client().send(new BatchWriteCommand({ RequestItems: { [table]: batch } }));
            next.push(...((out.UnprocessedItems?.[table] ?? []) as WriteRequest[]));
          } catch (error) {
            if (!isRetryable(error)) throw error;
            next.push(...batch);
          }
        });
        return next;
      });
    },

    async get(keys, projection, deadline) {
      const items: Item[] = [];
      const unchecked = await rounds(keys, deadline, async (pending) => {
        try {
          const out = await client().send(
            new BatchGetCommand({
              RequestItems: {
                [table]: { Keys: [...pending], ...(projection ? { ProjectionExpression: projection } : {}) },
              },
            }),
          );
          items.push(...(out.Responses?.[table] ?? []));
          return (out.UnprocessedKeys?.[table]?.Keys ?? []) as (typeof keys)[number][];
        } catch (error) {
          if (!isRetryable(error)) throw error;
          return [...pending];
        }
      });
      return { items, unchecked };
    },

    async execute(entries, statementOf, deadline) {
      const conditionFailed: (typeof entries)[number][] = [];
      const left = await rounds(entries, deadline, async (pending) => {
        const next: (typeof entries)[number][] = [];
        await pool(slices(pending, STATEMENT_BATCH), concurrency, async (batch) => {
          try {
            const out = await client().send(
              new BatchExecuteStatementCommand({ Statements: batch.map(statementOf) }),
            );
            for (const [i, response] of (out.Responses ?? []).entries()) {
              const entry = batch[i] as (typeof batch)[number];
              if (!response.Error) continue;
              if (response.Error.Code === 'ConditionalCheckFailed') conditionFailed.push(entry);
              else next.push(entry);
            }
          } catch (error) {
            if (!isRetryable(error)) throw error;
            next.push(...batch);
          }
        });
        return next;
      });
      return { conditionFailed, left };
    },
  };
}
