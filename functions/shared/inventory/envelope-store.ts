/**
 * The envelope store (docs/contracts.md "Stores"): envelopes of DLQ messages in the pipeline table,
 * bodies byte-exact as DynamoDB Binary, large bodies in chunk items.
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
 *    An envelope that an earlier step of the same inventory (`inventoryId`, `inventoryStep`)
 *    already stored is a duplicate delivery: not written again, counted in `duplicates`.
 *
 * `UnprocessedItems` / `UnprocessedKeys` are re-sent with exponential backoff and full jitter
 * until they are empty or the deadline passes; the result reports what was left.
 *
 * Where the parts live: the item layout (envelope and chunk items, the observation UPDATE, the way
 * back to a {@link StoredEnvelope}) in `envelope-items.ts`; the retried batch calls in
 * `#platform/dynamo-batches.js`; here, the steps and the single-item reads and writes.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchExecuteStatement.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ql-reference.update.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html (400 KB items)
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { createDynamoBatches, type DynamoBatches, pool } from '#platform/dynamo-batches.js';
import {
  BodyIntegrityError,
  isConditionalCheckFailed,
  RecordNotFoundError,
  StateConflictError,
  TransientError,
} from '#platform/errors.js';
import { readShape, recordFields, shapeOf } from '#platform/record-shapes.js';
import { keys, TABLE } from '#platform/table.js';
import type { EnvelopeWrite } from './envelope.js';
import {
  chunkItems,
  ENVELOPE_ENTITY,
  type EnvelopeTouch,
  envelopeItem,
  envelopeKey,
  envelopeRecord,
  fromItem,
  type StoredEnvelope,
  touchStatement,
} from './envelope-items.js';
import { sha256Hex } from './idempotency-key.js';
import type { Envelope, EnvelopeState } from './model.js';

export type { EnvelopeWrite } from './envelope.js';
export type { StoredEnvelope } from './envelope-items.js';

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
   * Envelopes an earlier step of the same inventory (`envelope.inventoryId`, lower
   * `inventoryStep`) had already stored: a duplicate delivery of a message it saw in an earlier
   * invocation. Counted in `written`, not written again.
   */
  duplicates: number;
  /** MessageIds of those duplicates. */
  duplicateMessageIds: string[];
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
  /**
   * The envelopes of these DLQ MessageIds that exist (BatchGetItem, 100 per call; the recording
   * mover looks up each received batch at once), by MessageId.
   * @throws TransientError when some keys are still unprocessed after the retries.
   */
  getEnvelopes(dlqArn: string, messageIds: readonly string[]): Promise<Map<string, StoredEnvelope>>;
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
   * @throws RecordNotFoundError when the envelope does not exist.
   * @throws StateConflictError when it is not in `expectedState` (naming the state it is in).
   */
  setState(
    dlqArn: string,
    messageId: string,
    state: EnvelopeState,
    reason?: string,
    opts?: { expectedState?: EnvelopeState },
  ): Promise<void>;
  /**
   * Records (ISO 8601 time) or clears (null) that an extended-client message's payload object is
   * gone (`payloadGoneAt`). Only the mark changes.
   * @throws RecordNotFoundError when the envelope does not exist.
   */
  markPayloadGone(dlqArn: string, messageId: string, at: string | null): Promise<void>;
  /**
   * The body's exact bytes (inline or reassembled from chunks), checked against `bodySha256`.
   * @throws BodyIntegrityError when chunks are missing or the hash / byte length does not match.
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

/** Keys checked per BatchGetItem (the API's limit). */
const KEYS_PER_GET = 100;

/** What the existence check reads of a stored envelope. */
type Existing = {
  incidentId: string | undefined;
  inventoryId: string | undefined;
  inventoryStep: number | undefined;
};

/** True when an earlier step of the same inventory stored this envelope (a duplicate delivery). */
function earlierStepOfSameInventory(stored: Existing, w: EnvelopeWrite): boolean {
  const e = w.envelope;
  return (
    e.inventoryId !== undefined &&
    e.inventoryStep !== undefined &&
    stored.inventoryId === e.inventoryId &&
    stored.inventoryStep !== undefined &&
    stored.inventoryStep < e.inventoryStep
  );
}

/** What every operation below works on: the client, the table and its batch calls. */
interface Db {
  client: () => DynamoDBDocumentClient;
  table: string;
  batches: DynamoBatches;
  concurrency: number;
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
  const concurrency = options.concurrency ?? 4;
  const batches = createDynamoBatches({
    client,
    table,
    concurrency,
    ...(options.backoff ? { backoff: options.backoff } : {}),
  });
  const db: Db = { client, table, batches, concurrency };
  return {
    putEnvelopes: (items, opts) => putEnvelopes(db, items, opts.deadlineMs),
    getEnvelope: (dlqArn, messageId) => getEnvelope(db, dlqArn, messageId),
    getEnvelopes: (dlqArn, messageIds) => getEnvelopes(db, dlqArn, messageIds),
    listEnvelopes: (dlqArn) => ({ [Symbol.asyncIterator]: () => listEnvelopes(db, dlqArn) }),
    countEnvelopes: (dlqArn, state) => countEnvelopes(db, dlqArn, state),
    findByIdempotencyKey: (key) => findByIdempotencyKey(db, key),
    setState: (dlqArn, messageId, state, reason, opts = {}) =>
      setState(db, { dlqArn, messageId, state, reason, expectedState: opts.expectedState }),
    markPayloadGone: (dlqArn, messageId, at) => markPayloadGone(db, dlqArn, messageId, at),
    readBody: (envelope) => readBody(db, envelope),
    getCursor: (dlqArn) => getCursor(db, dlqArn),
    putCursor: (cursor) => putCursor(db, cursor),
    clearCursor: (dlqArn) => clearCursor(db, dlqArn),
  };
}

/** The `pk|sk` of a write's envelope item, how the steps below match writes to stored items. */
const itemId = (w: EnvelopeWrite) => `${keys.dlq(w.envelope.dlqArn)}|${keys.message(w.envelope.messageId)}`;

/**
 * Step 1: which envelopes exist already (by `pk|sk`, with their `incidentId` and inventory),
 * 100 keys per BatchGetItem; keys still unchecked at the deadline in `unchecked`.
 */
async function findExisting(
  db: Db,
  writes: readonly EnvelopeWrite[],
  deadline: number,
): Promise<{ found: Map<string, Existing>; unchecked: Set<string> }> {
  const found = new Map<string, Existing>();
  const unchecked = new Set<string>();
  const groups: EnvelopeWrite[][] = [];
  for (let i = 0; i < writes.length; i += KEYS_PER_GET) groups.push(writes.slice(i, i + KEYS_PER_GET));
  await pool(groups, db.concurrency, async (group) => {
    const keysOf = group.map((w) => envelopeKey(w.envelope.dlqArn, w.envelope.messageId));
    const r = await db.batches.get(
      keysOf,
      'pk, sk, dlqArn, messageId, incidentId, inventoryId, inventoryStep, shapeVersion',
      deadline,
    );
    for (const item of r.items.map((i) => readShape('envelope', i, envelopeRecord(i))))
      found.set(`${item.pk}|${item.sk}`, {
        incidentId: item.incidentId as string | undefined,
        inventoryId: item.inventoryId as string | undefined,
        inventoryStep: item.inventoryStep as number | undefined,
      });
    for (const k of r.unchecked) unchecked.add(`${k.pk}|${k.sk}`);
  });
  return { found, unchecked };
}

/** Writes envelopes idempotently in the three steps of the module comment. */
async function putEnvelopes(
  db: Db,
  items: readonly EnvelopeWrite[],
  deadlineMs: number,
): Promise<PutEnvelopesResult> {
  const deadline = deadlineMs < 1e12 ? Date.now() + deadlineMs : deadlineMs;
  const unique = new Map<string, EnvelopeWrite>();
  for (const w of items) unique.set(itemId(w), w);
  const all = [...unique.values()];

  // 1. Which envelopes exist already.
  const { found, unchecked } = await findExisting(db, all, deadline);
  const failed: string[] = [];
  const fresh: EnvelopeWrite[] = [];
  const updates: EnvelopeTouch[] = [];
  const duplicateMessageIds: string[] = [];
  for (const w of all) {
    const k = itemId(w);
    const stored = found.get(k);
    if (unchecked.has(k)) failed.push(w.envelope.messageId);
    else if (!stored) fresh.push(w);
    else if (earlierStepOfSameInventory(stored, w)) duplicateMessageIds.push(w.envelope.messageId);
    else updates.push({ write: w, setIncident: stored.incidentId === undefined });
  }
  // 2. Existing ones: observation fields only, batched. One that vanished meanwhile is new again.
  const touch = await db.batches.execute(updates, (u) => touchStatement(db.table, u), deadline);
  const touched = updates.length - touch.conditionFailed.length - touch.left.length;
  fresh.push(...touch.conditionFailed.map((u) => u.write));
  failed.push(...touch.left.map((u) => u.write.envelope.messageId));
  // 3. New ones: chunks first, so an envelope item never points at chunks that are not there.
  const chunkLeft = await db.batches.write(
    fresh.flatMap((w) => chunkItems(w).map((Item) => ({ PutRequest: { Item } }))),
    deadline,
  );
  const chunkFailed = new Set(chunkLeft.map((r) => String(r.PutRequest.Item.messageId)));
  failed.push(...chunkFailed);
  const toPut = fresh.filter((w) => !chunkFailed.has(w.envelope.messageId));
  const envLeft = await db.batches.write(
    toPut.map((w) => ({ PutRequest: { Item: envelopeItem(w) } })),
    deadline,
  );
  const envFailed = envLeft.map((r) => String(r.PutRequest.Item.messageId));
  failed.push(...envFailed);
  const notCreated = new Set(envFailed);
  const createdMessageIds = toPut.map((w) => w.envelope.messageId).filter((id) => !notCreated.has(id));
  return {
    written: touched + createdMessageIds.length + duplicateMessageIds.length,
    unprocessed: failed.length,
    created: createdMessageIds.length,
    createdMessageIds,
    unprocessedMessageIds: failed,
    duplicates: duplicateMessageIds.length,
    duplicateMessageIds,
  };
}

async function getEnvelope(db: Db, dlqArn: string, messageId: string): Promise<StoredEnvelope | undefined> {
  const out = await db
    .client()
    .send(new GetCommand({ TableName: db.table, Key: envelopeKey(dlqArn, messageId) }));
  return out.Item ? fromItem(out.Item) : undefined;
}

/** Every item a Query returns, one page at a time. */
/** Unprocessed keys of a batch lookup are retried this long, milliseconds. */
const LOOKUP_DEADLINE_MS = 10_000;

async function getEnvelopes(
  db: Db,
  dlqArn: string,
  messageIds: readonly string[],
): Promise<Map<string, StoredEnvelope>> {
  const found = new Map<string, StoredEnvelope>();
  const unique = [...new Set(messageIds)];
  const deadline = Date.now() + LOOKUP_DEADLINE_MS;
  for (let i = 0; i < unique.length; i += KEYS_PER_GET) {
    const group = unique.slice(i, i + KEYS_PER_GET).map((id) => envelopeKey(dlqArn, id));
    const r = await db.batches.get(group, undefined, deadline);
    if (r.unchecked.length > 0)
      throw new TransientError(
        `dynamodb:BatchGetItem (envelopes): ${r.unchecked.length} key(s) still unprocessed`,
      );
    for (const item of r.items) {
      const envelope = fromItem(item);
      found.set(envelope.messageId, envelope);
    }
  }
  return found;
}

/**
 * Items one Query page of the store may evaluate (`Limit`). Without a `Limit`, DynamoDB Local reads
 * every item from the page's start to the end of the key range and then cuts the page at 1 MB, so a
 * full listing or count of a deep DLQ costs the square of its depth there (the count of the ramp's
 * first accounting took 66 s at 20,000 envelopes: bench/envelope-listing, docs/cost-model.md). On
 * DynamoDB a 1 MB page holds about 450 envelopes, so the limit adds no calls there.
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.Pagination.html
 */
const QUERY_PAGE_ITEMS = 1000;

async function* queryItems(
  db: Db,
  input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>,
): AsyncGenerator<Record<string, unknown>> {
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.client().send(
      new QueryCommand({
        ...input,
        TableName: db.table,
        Limit: QUERY_PAGE_ITEMS,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    yield* out.Items ?? [];
    start = out.LastEvaluatedKey;
  } while (start);
}

/** Every envelope item of a DLQ (chunks filtered out), one Query page at a time. */
async function* listEnvelopes(db: Db, dlqArn: string): AsyncGenerator<StoredEnvelope> {
  const items = queryItems(db, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :msg)',
    FilterExpression: 'entity = :envelope',
    ExpressionAttributeValues: { ':pk': keys.dlq(dlqArn), ':msg': 'MSG#', ':envelope': ENVELOPE_ENTITY },
  });
  for await (const item of items) yield fromItem(item);
}

/** How many envelopes of a DLQ are in `state`: COUNT pages, nothing but the counts comes back. */
async function countEnvelopes(db: Db, dlqArn: string, state: EnvelopeState): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.client().send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :msg)',
        FilterExpression: 'entity = :envelope AND #state = :state',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':pk': keys.dlq(dlqArn),
          ':msg': 'MSG#',
          ':envelope': ENVELOPE_ENTITY,
          ':state': state,
        },
        Select: 'COUNT',
        Limit: QUERY_PAGE_ITEMS,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    count += out.Count ?? 0;
    start = out.LastEvaluatedKey;
  } while (start);
  return count;
}

async function findByIdempotencyKey(db: Db, key: string): Promise<StoredEnvelope[]> {
  const found: StoredEnvelope[] = [];
  const items = queryItems(db, {
    IndexName: TABLE.keyIndex.name,
    KeyConditionExpression: '#pk = :pk',
    ExpressionAttributeNames: { '#pk': TABLE.keyIndex.partitionKey },
    ExpressionAttributeValues: { ':pk': keys.idempotencyKey(key) },
  });
  for await (const item of items) found.push(fromItem(item));
  return found;
}

/**
 * A conditional state change. `ReturnValuesOnConditionCheckFailure: ALL_OLD` tells a missing
 * envelope (RecordNotFoundError) from one in another state (StateConflictError naming it).
 */
async function setState(
  db: Db,
  change: {
    dlqArn: string;
    messageId: string;
    state: EnvelopeState;
    reason: string | undefined;
    expectedState: EnvelopeState | undefined;
  },
): Promise<void> {
  const { dlqArn, messageId, state, reason, expectedState } = change;
  const condition =
    expectedState !== undefined ? 'attribute_exists(pk) AND #state = :expected' : 'attribute_exists(pk)';
  try {
    await db.client().send(
      new UpdateCommand({
        TableName: db.table,
        Key: envelopeKey(dlqArn, messageId),
        ConditionExpression: condition,
        UpdateExpression:
          reason !== undefined
            ? 'SET #state = :state, stateReason = :reason, stateChangedAt = :now'
            : 'SET #state = :state, stateChangedAt = :now REMOVE stateReason',
        ExpressionAttributeNames: { '#state': 'state' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        ExpressionAttributeValues: {
          ':state': state,
          ':now': new Date().toISOString(),
          ...(reason !== undefined ? { ':reason': reason } : {}),
          ...(expectedState !== undefined ? { ':expected': expectedState } : {}),
        },
      }),
    );
  } catch (error) {
    if (isConditionalCheckFailed(error)) {
      const record = `envelope ${messageId} in ${dlqArn}`;
      if (!error.Item || expectedState === undefined) throw new RecordNotFoundError(record, error);
      const actual = unmarshall(error.Item).state as string | undefined;
      throw new StateConflictError(record, expectedState, actual, error);
    }
    throw error;
  }
}

async function markPayloadGone(db: Db, dlqArn: string, messageId: string, at: string | null): Promise<void> {
  try {
    await db.client().send(
      new UpdateCommand({
        TableName: db.table,
        Key: envelopeKey(dlqArn, messageId),
        ConditionExpression: 'attribute_exists(pk)',
        UpdateExpression: at === null ? 'REMOVE payloadGoneAt' : 'SET payloadGoneAt = :at',
        ...(at === null ? {} : { ExpressionAttributeValues: { ':at': at } }),
      }),
    );
  } catch (error) {
    if (isConditionalCheckFailed(error))
      throw new RecordNotFoundError(`envelope ${messageId} in ${dlqArn}`, error);
    throw error;
  }
}

/** The body bytes: inline on the read item, else read from the envelope item or its chunks; then checked. */
async function readBody(db: Db, envelope: Envelope): Promise<Uint8Array> {
  let bytes: Uint8Array;
  if (!envelope.bodyChunked) {
    const inline = (envelope as StoredEnvelope).inlineBody;
    bytes = inline ?? (await readInlineBody(db, envelope));
  } else {
    const parts = await readChunks(db, envelope);
    if (parts.length !== envelope.bodyChunks)
      throw new BodyIntegrityError(
        envelope.messageId,
        `found ${parts.length} of ${envelope.bodyChunks} chunks`,
      );
    bytes = new Uint8Array(Buffer.concat(parts));
  }
  if (bytes.byteLength !== envelope.bodyBytes || sha256Hex(bytes) !== envelope.bodySha256)
    throw new BodyIntegrityError(
      envelope.messageId,
      `does not match its SHA-256 / byte length (${bytes.byteLength} of ${envelope.bodyBytes} bytes)`,
    );
  return bytes;
}

async function readInlineBody(db: Db, envelope: Envelope): Promise<Uint8Array> {
  const out = await db.client().send(
    new GetCommand({
      TableName: db.table,
      Key: envelopeKey(envelope.dlqArn, envelope.messageId),
      ProjectionExpression: 'body',
    }),
  );
  return (out.Item?.body as Uint8Array | undefined) ?? new Uint8Array();
}

async function readChunks(db: Db, envelope: Envelope): Promise<Uint8Array[]> {
  const parts: Uint8Array[] = [];
  const items = queryItems(db, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: {
      ':pk': keys.dlq(envelope.dlqArn),
      ':prefix': `${keys.message(envelope.messageId)}#CHUNK#`,
    },
  });
  for await (const item of items) {
    const chunk = readShape(
      'body-chunk',
      item,
      `body chunk ${String(item.sk)} of envelope ${envelope.messageId}`,
    );
    parts.push(chunk.data as Uint8Array);
  }
  return parts;
}

const cursorKey = (dlqArn: string) => ({ pk: keys.dlq(dlqArn), sk: keys.cursor });

async function getCursor(db: Db, dlqArn: string): Promise<InventoryCursor | undefined> {
  const out = await db.client().send(new GetCommand({ TableName: db.table, Key: cursorKey(dlqArn) }));
  if (!out.Item) return undefined;
  return recordFields<InventoryCursor>('inventory-cursor', out.Item, `inventory cursor of ${dlqArn}`);
}

async function putCursor(db: Db, cursor: InventoryCursor): Promise<void> {
  await db.client().send(
    new PutCommand({
      TableName: db.table,
      Item: { ...cursorKey(cursor.dlqArn), ...shapeOf('inventory-cursor'), ...cursor },
    }),
  );
}

async function clearCursor(db: Db, dlqArn: string): Promise<void> {
  await db.client().send(new DeleteCommand({ TableName: db.table, Key: cursorKey(dlqArn) }));
}
