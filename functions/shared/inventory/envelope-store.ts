/**
 * The envelope store (docs/contracts.md "Stores"): envelopes of DLQ messages in the pipeline table,
 * bodies byte-exact as DynamoDB Binary, large bodies in chunk items (case C14).
 *
 * ## Why writes stay idempotent although BatchWriteItem cannot be conditional
 *
 * BatchWriteItem only has unconditional Put/Delete, and a Put replaces the whole item: a blind
 * re-put of an envelope would reset `firstSeenAt` and, worse, a `state` the workflow already moved
 * on (REDRIVEN, PARKED...). So {@link EnvelopeStore.putEnvelopes} works in three steps:
 *
 * 1. `BatchGetItem` (keys only, 100 per call) finds which envelopes already exist.
 * 2. New envelopes: their chunk items first (content-addressed by MessageId and index, identical
 *    on every write, so safe to overwrite), then the envelope items, in `BatchWriteItem` Puts.
 *    An envelope nobody has seen before cannot have a state other than IN_DLQ, and the workflow
 *    only starts after triage, so the blind Put overwrites nothing of value. Two concurrent
 *    triage runs writing the same new message both write IN_DLQ and identical derived fields;
 *    only `firstSeenAt` may move by the gap between them.
 * 3. Existing envelopes: a PartiQL `UPDATE` per envelope, 25 to a `BatchExecuteStatement` call,
 *    setting only observation fields (`lastSeenAt`, `receiveCount`, `systemAttributes`,
 *    `inventoryId`, and `incidentId` when the item has none); PartiQL's UPDATE only changes an
 *    item that exists: `firstSeenAt`, `state` and `stateReason` are never touched. A second
 *    triage of a DLQ whose envelopes exist costs about 0.05 DynamoDB calls per message (one
 *    BatchGetItem per 100, one BatchExecuteStatement per 25), not one UpdateItem each.
 *    An envelope that the same inventory (`inventoryId`) already saw is a duplicate delivery:
 *    not written again, counted in `duplicates`.
 *
 * `UnprocessedItems` / `UnprocessedKeys` are re-sent with exponential backoff and full jitter
 * until they are empty or the deadline passes (case C22); the result reports what was left.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchExecuteStatement.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ql-reference.update.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html (400 KB items)
 */
import {
  BatchExecuteStatementCommand,
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { awsErrorName, isRetryable, RedriveError } from '#platform/errors.js';
import { keys, TABLE } from '#platform/table.js';
import { BODY_CHUNK_BYTES, cutText, type EnvelopeWrite } from './envelope.js';
import { sha256Hex } from './idempotency-key.js';
import type { Envelope, EnvelopeState, StoredMessageAttribute } from './model.js';

export type { EnvelopeWrite } from './envelope.js';

/** An envelope as read back; `inlineBody` holds the body bytes when they are stored inline. */
export interface StoredEnvelope extends Envelope {
  inlineBody?: Uint8Array;
  /** Set when attribute values were cut to keep the item under 400 KB (see `shrinkAttributes`). */
  attributesTruncated?: { originalItemBytes: number; keptCharsPerValue: number };
}

/** Result of {@link EnvelopeStore.putEnvelopes}. */
export interface PutEnvelopesResult {
  /** Envelopes now stored (new or updated). */
  written: number;
  /** Envelopes not stored because the deadline passed with their writes still unprocessed. */
  unprocessed: number;
  /** Envelopes that did not exist before this call. */
  created: number;
  /** MessageIds of the envelopes this call created (`created` of them). */
  createdMessageIds: string[];
  /** MessageIds of the unprocessed envelopes. */
  unprocessedMessageIds: string[];
  /**
   * Envelopes the same inventory (`envelope.inventoryId`) had already stored: a duplicate delivery
   * of a message it saw in an earlier invocation. Counted in `written`, not written again.
   */
  duplicates: number;
}

/** Progress of a partial inventory (`DLQ#<dlqArn>` / `CURSOR`). */
export interface InventoryCursor {
  dlqArn: string;
  incidentId: string;
  /** Dedupe key of the alarm transition that started the inventory. */
  dedupeKey: string;
  /** Runs so far. */
  runs: number;
  /** Envelopes stored so far, across runs. */
  inventoried: number;
  /** Why the last run stopped (budget, time, in-flight page limit). */
  reason: string;
  updatedAt: string;
}

/** The envelope store's operations. */
export interface EnvelopeStore {
  /**
   * Writes envelopes idempotently (see the module comment).
   * @param opts.deadlineMs - stop retrying unprocessed items at this time, epoch milliseconds
   *   (a value below 10^12 is read as a duration in milliseconds from now).
   */
  putEnvelopes(items: readonly EnvelopeWrite[], opts: { deadlineMs: number }): Promise<PutEnvelopesResult>;
  getEnvelope(dlqArn: string, messageId: string): Promise<StoredEnvelope | undefined>;
  /** Every envelope of one DLQ, paginated lazily (chunk items skipped). */
  listEnvelopes(dlqArn: string): AsyncIterable<StoredEnvelope>;
  /**
   * How many envelopes of one DLQ are in `state` (a COUNT query: no item leaves DynamoDB, though
   * every item of the DLQ is read and billed).
   */
  countEnvelopes(dlqArn: string, state: EnvelopeState): Promise<number>;
  /** Every envelope carrying this idempotency key, across DLQs and MessageIds (GSI `byIdempotencyKey`). */
  findByIdempotencyKey(key: string): Promise<StoredEnvelope[]>;
  /**
   * Moves an envelope to a state, with the reason for PARKED / DISCARDED.
   * @param opts.expectedState - only when the envelope is currently in this state.
   * @throws RedriveError code CONFLICT when the envelope does not exist or is not in `expectedState`.
   */
  setState(
    dlqArn: string,
    messageId: string,
    state: EnvelopeState,
    reason?: string,
    opts?: { expectedState?: EnvelopeState },
  ): Promise<void>;
  /**
   * The body's exact bytes (inline or reassembled from chunks), checked against `bodySha256`.
   * @throws RedriveError code INTERNAL when chunks are missing or the hash does not match.
   */
  readBody(envelope: Envelope): Promise<Uint8Array>;
  getCursor(dlqArn: string): Promise<InventoryCursor | undefined>;
  putCursor(cursor: InventoryCursor): Promise<void>;
  clearCursor(dlqArn: string): Promise<void>;
}

/** Options of {@link createEnvelopeStore}. */
export interface EnvelopeStoreOptions {
  /** @default the shared document client (`clients.ts`) */
  client?: DynamoDBDocumentClient;
  /** @default pipelineConfig().tableName (`TABLE_NAME`) */
  tableName?: string;
  /** Backoff of unprocessed-item retries, milliseconds. @default { baseMs: 50, maxMs: 2000 } */
  backoff?: { baseMs: number; maxMs: number };
  /** Parallel groups of 25 within one putEnvelopes call. @default 4 */
  concurrency?: number;
}

const BATCH = 25;
/** Statements per BatchExecuteStatement call (the API's limit). */
const STATEMENTS = 25;
// 16 MB request limit: stay under it whatever the chunk sizes are.
const MAX_BATCH_BYTES = 12 * 1024 * 1024;
const ENVELOPE = 'envelope';
const CHUNK = 'chunk';

type Item = Record<string, unknown>;
/** What the existence check reads of a stored envelope. */
type Existing = { incidentId: string | undefined; inventoryId: string | undefined };
type WriteRequest = { PutRequest: { Item: Item } };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  });
  await Promise.all(workers);
}

function fromItem(item: Item): StoredEnvelope {
  const {
    pk: _pk,
    sk: _sk,
    gsi1pk: _g1,
    gsi1sk: _g2,
    entity: _e,
    body,
    stateChangedAt: _s,
    ...rest
  } = item as Item & { body?: Uint8Array };
  const envelope = rest as unknown as StoredEnvelope;
  if (body !== undefined) envelope.inlineBody = body;
  return envelope;
}

/**
 * Creates the envelope store.
 *
 * @example
 * const store = createEnvelopeStore();
 * const { written, unprocessed } = await store.putEnvelopes(writes, { deadlineMs: Date.now() + 10_000 });
 */
export function createEnvelopeStore(options: EnvelopeStoreOptions = {}): EnvelopeStore {
  const client = () => options.client ?? documentClient();
  const table = options.tableName ?? pipelineConfig().tableName;
  const backoff = options.backoff ?? { baseMs: 50, maxMs: 2000 };
  const concurrency = options.concurrency ?? 4;

  const delay = (attempt: number, deadline: number) => {
    const cap = Math.min(backoff.maxMs, backoff.baseMs * 2 ** attempt);
    return Math.max(0, Math.min(Math.random() * cap, deadline - Date.now()));
  };

  function envelopeKey(dlqArn: string, messageId: string) {
    return { pk: keys.dlq(dlqArn), sk: keys.message(messageId) };
  }

  function envelopeItem(w: EnvelopeWrite): Item {
    const e = w.envelope;
    const item: Item = {
      ...e,
      ...envelopeKey(e.dlqArn, e.messageId),
      [TABLE.keyIndex.partitionKey]: keys.idempotencyKey(e.idempotencyKey),
      [TABLE.keyIndex.sortKey]: `${keys.dlq(e.dlqArn)}#${keys.message(e.messageId)}`,
      entity: ENVELOPE,
    };
    if (!e.bodyChunked) item.body = w.body;
    if (itemBytes(item) > MAX_ENVELOPE_ITEM_BYTES) return shrinkAttributes(item);
    return item;
  }

  function chunkItems(w: EnvelopeWrite): Item[] {
    const e = w.envelope;
    const items: Item[] = [];
    for (let i = 0; i < e.bodyChunks; i++) {
      items.push({
        pk: keys.dlq(e.dlqArn),
        sk: keys.chunk(e.messageId, i),
        entity: CHUNK,
        messageId: e.messageId,
        index: i,
        data: w.body.subarray(i * BODY_CHUNK_BYTES, (i + 1) * BODY_CHUNK_BYTES),
      });
    }
    return items;
  }

  /** Splits requests into batches of at most 25 and under the request byte limit. */
  function toBatches(requests: readonly WriteRequest[]): WriteRequest[][] {
    const batches: WriteRequest[][] = [];
    let current: WriteRequest[] = [];
    let bytes = 0;
    for (const r of requests) {
      const size = itemBytes(r.PutRequest.Item);
      if (current.length === BATCH || (current.length > 0 && bytes + size > MAX_BATCH_BYTES)) {
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

  /**
   * Writes requests with BatchWriteItem: every batch once, then the UnprocessedItems of the round
   * again after a backoff, until none are left or the deadline passes. Returns what is left.
   */
  async function batchWrite(requests: WriteRequest[], deadline: number): Promise<WriteRequest[]> {
    let pending = requests;
    for (let attempt = 0; pending.length > 0; attempt++) {
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
      pending = next;
      if (pending.length === 0 || Date.now() >= deadline) break;
      await sleep(delay(attempt, deadline));
    }
    return pending;
  }

  /**
   * The envelopes that already exist (by `pk|sk`, with their `incidentId` and `inventoryId`);
   * unchecked keys after the deadline in `unchecked`.
   */
  async function existing(
    group: readonly EnvelopeWrite[],
    deadline: number,
  ): Promise<{ found: Map<string, Existing>; unchecked: Set<string> }> {
    let pending = group.map((w) => envelopeKey(w.envelope.dlqArn, w.envelope.messageId));
    const found = new Map<string, Existing>();
    for (let attempt = 0; pending.length > 0; attempt++) {
      try {
        const out = await client().send(
          new BatchGetCommand({
            RequestItems: {
              [table]: { Keys: pending, ProjectionExpression: 'pk, sk, incidentId, inventoryId' },
            },
          }),
        );
        for (const item of out.Responses?.[table] ?? [])
          found.set(`${item.pk}|${item.sk}`, {
            incidentId: item.incidentId as string | undefined,
            inventoryId: item.inventoryId as string | undefined,
          });
        pending = (out.UnprocessedKeys?.[table]?.Keys ?? []) as typeof pending;
      } catch (error) {
        if (!isRetryable(error)) throw error;
      }
      if (pending.length === 0 || Date.now() >= deadline) break;
      await sleep(delay(attempt, deadline));
    }
    return { found, unchecked: new Set(pending.map((k) => `${k.pk}|${k.sk}`)) };
  }

  /**
   * Observation-only updates of existing envelopes, 25 PartiQL UPDATEs per BatchExecuteStatement
   * (one item each, so duplicates of a key never share a call). A statement refused with
   * ConditionalCheckFailed found no item (it vanished meanwhile); throttled or failed statements
   * are sent again with backoff until the deadline. Returns the writes that found no item, and
   * those still not done at the deadline.
   */
  async function touchAll(
    updates: ReadonlyArray<{ write: EnvelopeWrite; setIncident: boolean }>,
    deadline: number,
  ): Promise<{ vanished: EnvelopeWrite[]; left: EnvelopeWrite[] }> {
    const vanished: EnvelopeWrite[] = [];
    let pending = [...updates];
    for (let attempt = 0; pending.length > 0; attempt++) {
      const batches: Array<typeof pending> = [];
      for (let i = 0; i < pending.length; i += STATEMENTS) batches.push(pending.slice(i, i + STATEMENTS));
      const next: typeof pending = [];
      await pool(batches, concurrency, async (batch) => {
        try {
          const out = await client().send(
            new BatchExecuteStatementCommand({ Statements: batch.map((u) => touchStatement(u)) }),
          );
          for (const [i, response] of (out.Responses ?? []).entries()) {
            const update = batch[i] as (typeof batch)[number];
            if (!response.Error) continue;
            if (response.Error.Code === 'ConditionalCheckFailed') vanished.push(update.write);
            else next.push(update);
          }
        } catch (error) {
          if (!isRetryable(error)) throw error;
          next.push(...batch);
        }
      });
      pending = next;
      if (pending.length === 0 || Date.now() >= deadline) break;
      await sleep(delay(attempt, deadline));
    }
    return { vanished, left: pending.map((u) => u.write) };
  }

  function touchStatement(u: { write: EnvelopeWrite; setIncident: boolean }) {
    const e = u.write.envelope;
    const sets: Array<[string, unknown]> = [
      ['lastSeenAt', e.lastSeenAt],
      ['receiveCount', e.receiveCount],
      ['systemAttributes', e.systemAttributes],
    ];
    if (e.inventoryId !== undefined) sets.push(['inventoryId', e.inventoryId]);
    if (u.setIncident && e.incidentId !== undefined) sets.push(['incidentId', e.incidentId]);
    const key = envelopeKey(e.dlqArn, e.messageId);
    return {
      // PartiQL UPDATE changes an existing item only (else ConditionalCheckFailed).
      Statement: `UPDATE "${table}" ${sets.map(([name]) => `SET "${name}" = ?`).join(' ')} WHERE pk = ? AND sk = ?`,
      Parameters: [...sets.map(([, value]) => value), key.pk, key.sk],
    };
  }

  /** The Query pages over one DLQ's envelopes (chunk items filtered out); with `state`, counts only. */
  async function* envelopePages(dlqArn: string, state?: EnvelopeState) {
    let start: Record<string, unknown> | undefined;
    do {
      const out = await client().send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :msg)',
          FilterExpression: state ? 'entity = :envelope AND #state = :state' : 'entity = :envelope',
          ExpressionAttributeValues: {
            ':pk': keys.dlq(dlqArn),
            ':msg': 'MSG#',
            ':envelope': ENVELOPE,
            ...(state ? { ':state': state } : {}),
          },
          ...(state ? { ExpressionAttributeNames: { '#state': 'state' }, Select: 'COUNT' as const } : {}),
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      yield out;
      start = out.LastEvaluatedKey;
    } while (start);
  }

  return {
    async putEnvelopes(items, opts) {
      const deadline = opts.deadlineMs < 1e12 ? Date.now() + opts.deadlineMs : opts.deadlineMs;
      const unique = new Map<string, EnvelopeWrite>();
      for (const w of items)
        unique.set(`${keys.dlq(w.envelope.dlqArn)}|${keys.message(w.envelope.messageId)}`, w);
      const all = [...unique.entries()];
      const groups: Array<typeof all> = [];
      for (let i = 0; i < all.length; i += 100) groups.push(all.slice(i, i + 100));

      // 1. Which envelopes exist already.
      const found = new Map<string, Existing>();
      const unchecked = new Set<string>();
      await pool(groups, concurrency, async (group) => {
        const r = await existing(
          group.map(([, w]) => w),
          deadline,
        );
        for (const [k, v] of r.found) found.set(k, v);
        for (const k of r.unchecked) unchecked.add(k);
      });
      const failed: string[] = [];
      const fresh: EnvelopeWrite[] = [];
      const updates: Array<{ write: EnvelopeWrite; setIncident: boolean }> = [];
      let duplicates = 0;
      for (const [k, w] of all) {
        const stored = found.get(k);
        if (unchecked.has(k)) failed.push(w.envelope.messageId);
        else if (!stored) fresh.push(w);
        else if (w.envelope.inventoryId !== undefined && stored.inventoryId === w.envelope.inventoryId)
          duplicates++;
        else updates.push({ write: w, setIncident: stored.incidentId === undefined });
      }
      // 2. Existing ones: observation fields only, batched.
      const touch = await touchAll(updates, deadline);
      const touched = updates.length - touch.vanished.length - touch.left.length;
      fresh.push(...touch.vanished);
      failed.push(...touch.left.map((w) => w.envelope.messageId));
      // 3. New ones: chunks first, so an envelope item never points at chunks that are not there.
      const chunkLeft = await batchWrite(
        fresh.flatMap((w) => chunkItems(w).map((Item) => ({ PutRequest: { Item } }))),
        deadline,
      );
      const chunkFailed = new Set(chunkLeft.map((r) => String(r.PutRequest.Item.messageId)));
      failed.push(...chunkFailed);
      const toPut = fresh.filter((w) => !chunkFailed.has(w.envelope.messageId));
      const envLeft = await batchWrite(
        toPut.map((w) => ({ PutRequest: { Item: envelopeItem(w) } })),
        deadline,
      );
      const envFailed = envLeft.map((r) => String(r.PutRequest.Item.messageId));
      failed.push(...envFailed);
      const notCreated = new Set(envFailed);
      const createdMessageIds = toPut.map((w) => w.envelope.messageId).filter((id) => !notCreated.has(id));
      return {
        written: touched + createdMessageIds.length + duplicates,
        unprocessed: failed.length,
        created: createdMessageIds.length,
        createdMessageIds,
        unprocessedMessageIds: failed,
        duplicates,
      };
    },

    async getEnvelope(dlqArn, messageId) {
      const out = await client().send(
        new GetCommand({ TableName: table, Key: envelopeKey(dlqArn, messageId) }),
      );
      return out.Item ? fromItem(out.Item) : undefined;
    },

    listEnvelopes(dlqArn) {
      return {
        async *[Symbol.asyncIterator]() {
          for await (const page of envelopePages(dlqArn))
            for (const item of page.Items ?? []) yield fromItem(item);
        },
      };
    },

    async countEnvelopes(dlqArn, state) {
      let count = 0;
      for await (const page of envelopePages(dlqArn, state)) count += page.Count ?? 0;
      return count;
    },

    async findByIdempotencyKey(key) {
      const found: StoredEnvelope[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const out = await client().send(
          new QueryCommand({
            TableName: table,
            IndexName: TABLE.keyIndex.name,
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: { '#pk': TABLE.keyIndex.partitionKey },
            ExpressionAttributeValues: { ':pk': keys.idempotencyKey(key) },
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        );
        for (const item of out.Items ?? []) found.push(fromItem(item));
        start = out.LastEvaluatedKey;
      } while (start);
      return found;
    },

    async setState(dlqArn, messageId, state, reason, opts = {}) {
      const condition =
        opts.expectedState !== undefined
          ? 'attribute_exists(pk) AND #state = :expected'
          : 'attribute_exists(pk)';
      try {
        await client().send(
          new UpdateCommand({
            TableName: table,
            Key: envelopeKey(dlqArn, messageId),
            ConditionExpression: condition,
            UpdateExpression:
              reason !== undefined
                ? 'SET #state = :state, stateReason = :reason, stateChangedAt = :now'
                : 'SET #state = :state, stateChangedAt = :now REMOVE stateReason',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: {
              ':state': state,
              ':now': new Date().toISOString(),
              ...(reason !== undefined ? { ':reason': reason } : {}),
              ...(opts.expectedState !== undefined ? { ':expected': opts.expectedState } : {}),
            },
          }),
        );
      } catch (error) {
        if (awsErrorName(error) === 'ConditionalCheckFailedException') {
          throw new RedriveError(
            'CONFLICT',
            opts.expectedState !== undefined
              ? `envelope ${messageId} in ${dlqArn} is missing or not in state ${opts.expectedState}`
              : `no envelope ${messageId} in ${dlqArn}`,
            { cause: error },
          );
        }
        throw error;
      }
    },

    async readBody(envelope) {
      let bytes: Uint8Array;
      if (!envelope.bodyChunked) {
        const inline = (envelope as StoredEnvelope).inlineBody;
        if (inline) bytes = inline;
        else {
          const out = await client().send(
            new GetCommand({
              TableName: table,
              Key: envelopeKey(envelope.dlqArn, envelope.messageId),
              ProjectionExpression: 'body',
            }),
          );
          bytes = (out.Item?.body as Uint8Array | undefined) ?? new Uint8Array();
        }
      } else {
        const parts: Uint8Array[] = [];
        let start: Record<string, unknown> | undefined;
        do {
          const out = await client().send(
            new QueryCommand({
              TableName: table,
              KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
              ExpressionAttributeValues: {
                ':pk': keys.dlq(envelope.dlqArn),
                ':prefix': `${keys.message(envelope.messageId)}#CHUNK#`,
              },
              ...(start ? { ExclusiveStartKey: start } : {}),
            }),
          );
          for (const item of out.Items ?? []) parts.push(item.data as Uint8Array);
          start = out.LastEvaluatedKey;
        } while (start);
        if (parts.length !== envelope.bodyChunks)
          throw new RedriveError(
            'INTERNAL',
            `body of ${envelope.messageId}: found ${parts.length} of ${envelope.bodyChunks} chunks`,
          );
        bytes = new Uint8Array(Buffer.concat(parts));
      }
      if (bytes.byteLength !== envelope.bodyBytes || sha256Hex(bytes) !== envelope.bodySha256)
        throw new RedriveError(
          'INTERNAL',
          `body of ${envelope.messageId} does not match its SHA-256 / byte length (${bytes.byteLength} of ${envelope.bodyBytes} bytes)`,
        );
      return bytes;
    },

    async getCursor(dlqArn) {
      const out = await client().send(
        new GetCommand({ TableName: table, Key: { pk: keys.dlq(dlqArn), sk: keys.cursor } }),
      );
      if (!out.Item) return undefined;
      const { pk: _pk, sk: _sk, ...cursor } = out.Item;
      return cursor as InventoryCursor;
    },

    async putCursor(cursor) {
      await client().send(
        new PutCommand({
          TableName: table,
          Item: { pk: keys.dlq(cursor.dlqArn), sk: keys.cursor, ...cursor },
        }),
      );
    },

    async clearCursor(dlqArn) {
      await client().send(
        new DeleteCommand({ TableName: table, Key: { pk: keys.dlq(dlqArn), sk: keys.cursor } }),
      );
    },
  };
}

/** Envelope items above this size get their large attribute values cut (DynamoDB's cap is 400 KB). */
const MAX_ENVELOPE_ITEM_BYTES = 380_000;
/** Attribute values longer than this are cut when an envelope item is too large. */
const KEPT_ATTRIBUTE_CHARS = 1024;

/**
 * SQS allows up to 1 MiB of body *plus* message attributes, so attributes alone can push an envelope
 * item past 400 KB. Rather than fail the whole batch (and every other message with it), such an
 * envelope keeps every attribute name and DataType, cuts values to 1 KiB, and says so in
 * `attributesTruncated` (with the original size). The body is unaffected (chunked), and the
 * message itself, with its full attributes, is still in the DLQ.
 */
function shrinkAttributes(item: Item): Item {
  const before = itemBytes(item);
  const cut = (attrs: Record<string, StoredMessageAttribute> | undefined) =>
    Object.fromEntries(
      Object.entries(attrs ?? {}).map(([name, a]) => [
        name,
        {
          dataType: a.dataType,
          ...(a.stringValue !== undefined
            ? { stringValue: cutText(a.stringValue, KEPT_ATTRIBUTE_CHARS) }
            : {}),
          ...(a.binaryValueBase64 !== undefined
            ? { binaryValueBase64: a.binaryValueBase64.slice(0, KEPT_ATTRIBUTE_CHARS) }
            : {}),
        },
      ]),
    );
  const shrunk: Item = {
    ...item,
    messageAttributes: cut(item.messageAttributes as Record<string, StoredMessageAttribute>),
  };
  const sns = item.sns as Envelope['sns'];
  if (sns) shrunk.sns = { ...sns, messageAttributes: cut(sns.messageAttributes) };
  shrunk.attributesTruncated = { originalItemBytes: before, keptCharsPerValue: KEPT_ATTRIBUTE_CHARS };
  return shrunk;
}

/** Rough DynamoDB size of an item, bytes (names + values); enough to keep requests under 16 MB. */
function itemBytes(item: Item): number {
  let n = 0;
  for (const [k, v] of Object.entries(item)) {
    n += k.length;
    if (v instanceof Uint8Array) n += v.byteLength;
    else if (typeof v === 'string') n += Buffer.byteLength(v);
    else n += Buffer.byteLength(JSON.stringify(v) ?? '');
  }
  return n;
}
