/**
 * The redrive ledger (`redrive-ledger.ts`) for up to ten messages at a time: what Park uses to take
 * the messages it parks out of the DLQ a batch at a time (record, send, mark SENT, delete, mark
 * deleted), with the same decisions and the same records as {@link RedriveLedger.begin},
 * `markSent` and `markDeleted` one message at a time. Apart from `redrive-ledger.ts` so that the
 * recording mover, whose bundle has no room left, does not bundle it.
 *
 * - `begin`: one consistent BatchGetItem reads the messages' entries and the version-1 entries of
 *   their keys (as `begin` does per message), then one BatchExecuteStatement records every message
 *   that has neither as a PartiQL `INSERT`, which DynamoDB refuses per statement when the item
 *   exists (`DuplicateItem`; a concurrent writer got there first). Everything else (an entry that
 *   exists: a crashed attempt's, another run's; a version-1 entry to carry over; an INSERT refused
 *   or unprocessed) is decided by the per-message `begin`, the rare path, unchanged.
 *   BatchExecuteStatement and not TransactWriteItems: both record ten new entries in one call, but a
 *   transaction is all or nothing (one entry that exists cancels the other nine: a second call) and
 *   costs two write units per item instead of one.
 * - `markSent` / `markDeleted`: PartiQL `UPDATE`s 25 to a call, conditioned on the owner run
 *   (`redriveId`), as the per-message updates are; statements answered with a retryable error are
 *   sent again with backoff (`#platform/dynamo-batches.js`).
 *
 * Each step sends from a line of its own: the crash matrix names a call by its first frame in
 * `functions/`, so a crash right after each step is a cell of its own.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchExecuteStatement.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ql-reference.insert.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ql-reference.update.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html (two write units per transactional item)
 */
import {
  BatchExecuteStatementCommand,
  BatchGetCommand,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { createDynamoBatches, type Item, type Statement } from '#platform/dynamo-batches.js';
import { asTransient, TransientError } from '#platform/errors.js';
import { LEDGER_ENTRY_WITHOUT_ENVELOPE_ID } from '#platform/record-shapes.js';
import { keys, TABLE } from '#platform/table.js';
import {
  type BeginOutcome,
  FINISHED_ENTRY_TTL_SECONDS,
  type LedgerEntry,
  type LedgerRequest,
  newDeduplicationId,
  type RedriveLedger,
} from '#transfer/redrive-ledger.js';

/** One message's SENT: the destination's MessageId (null for a discard). */
export interface SentMark {
  dlqArn: string;
  dlqMessageId: string;
  redriveId: string;
  sentMessageId: string | null;
}

/** One message's delete from the DLQ; `duplicatePrevented` when it was deleted without a second send. */
export interface DeletedMark {
  dlqArn: string;
  dlqMessageId: string;
  redriveId: string;
  duplicatePrevented: boolean;
}

/** The batched ledger port (see the module comment). */
export interface LedgerBatch {
  /**
   * {@link RedriveLedger.begin} of each request (distinct `dlqMessageId`s, at most 10), in order.
   * @param nowMs - epoch milliseconds, compared with existing entries' `visibleAfter`.
   * @throws TransientError when DynamoDB throttles or fails (nothing is sent yet: safe to retry).
   */
  begin(requests: readonly LedgerRequest[], nowMs: number): Promise<BeginOutcome[]>;
  /**
   * IN_PROGRESS -> SENT of each entry still owned by its `redriveId`.
   * @returns the `dlqMessageId`s whose entry another run owns now (taken over: not marked).
   * @throws TransientError when some are still unwritten after 30 s of retries.
   */
  markSent(marks: readonly SentMark[]): Promise<Set<string>>;
  /**
   * Records that each DLQ copy is gone (an entry another run took over meanwhile is left to it).
   * @throws TransientError when some are still unwritten after 30 s of retries.
   */
  markDeleted(marks: readonly DeletedMark[]): Promise<void>;
}

/** Unwritten SENT / deleted marks are retried this long, milliseconds. */
const MARK_DEADLINE_MS = 30_000;

/**
 * Creates the batched ledger.
 * @param options.ledger - the per-message ledger, for the entries that are not simply new
 * @param options.client - @default the shared document client
 * @param options.tableName - @default pipelineConfig().tableName (`TABLE_NAME`)
 */
export function createLedgerBatch(options: {
  ledger: RedriveLedger;
  client?: DynamoDBDocumentClient;
  tableName?: string;
  now?: () => Date;
}): LedgerBatch {
  const client = () => options.client ?? documentClient();
  const table = () => options.tableName ?? pipelineConfig().tableName;
  const nowDate = () => (options.now ? options.now() : new Date());
  const entryKey = (dlqArn: string, dlqMessageId: string) => ({
    [TABLE.partitionKey]: keys.dlq(dlqArn),
    [TABLE.sortKey]: keys.ledger(dlqMessageId),
  });
  const where = `WHERE "${TABLE.partitionKey}" = ? AND "${TABLE.sortKey}" = ? AND "redriveId" = ?`;
  const whereOf = (m: SentMark | DeletedMark) => [
    keys.dlq(m.dlqArn),
    keys.ledger(m.dlqMessageId),
    m.redriveId,
  ];
  // One batch writer per step, each sending from its own line (see the module comment).
  const stepBatches = (send: (command: BatchExecuteStatementCommand) => Promise<unknown>) =>
    createDynamoBatches({ client: () => ({ send }) as unknown as DynamoDBDocumentClient, table: table() });

  /** The entries and version-1 entries of `requests`, read consistently; undefined where unprocessed. */
  const read = async (requests: readonly LedgerRequest[]) => {
    const t = table();
    const Keys: Item[] = requests.flatMap((r) => [
      entryKey(r.dlqArn, r.dlqMessageId),
      { [TABLE.partitionKey]: keys.idempotencyKey(r.key), [TABLE.sortKey]: keys.legacyLedger },
    ]);
    let out: BatchGetCommandOutput;
    try {
      out = await client().send(
        new BatchGetCommand({ RequestItems: { [t]: { Keys, ConsistentRead: true } } }),
      );
    } catch (error) {
      throw asTransient('dynamodb:BatchGetItem (ledger batch)', error);
    }
    const found = new Set(
      [...(out.Responses?.[t] ?? []), ...(out.UnprocessedKeys?.[t]?.Keys ?? [])].map(
        (item) => `${item[TABLE.partitionKey]}\t${item[TABLE.sortKey]}`,
      ),
    );
    const legacy = new Map(
      (out.Responses?.[t] ?? [])
        .filter((item) => item[TABLE.sortKey] === keys.legacyLedger)
        .map((item) => [String(item[TABLE.partitionKey]), item]),
    );
    // Simply new: no entry, and no version-1 entry of the same DLQ message (an unprocessed key
    // counts as found: the per-message begin reads it again).
    return requests.map((r) => {
      const own = entryKey(r.dlqArn, r.dlqMessageId);
      const old = legacy.get(keys.idempotencyKey(r.key));
      const legacyUnread = found.has(`${keys.idempotencyKey(r.key)}\t${keys.legacyLedger}`) && !old;
      return (
        !found.has(`${own[TABLE.partitionKey]}\t${own[TABLE.sortKey]}`) &&
        !legacyUnread &&
        !(old && old.dlqArn === r.dlqArn && old.dlqMessageId === r.dlqMessageId)
      );
    });
  };

  /** INSERTs the new entries in one call. @returns which were recorded. */
  const insert = async (entries: readonly LedgerEntry[]): Promise<boolean[]> => {
    if (entries.length === 0) return [];
    const Statements: Statement[] = entries.map((entry) => {
      const item: Item = {
        ...entryKey(entry.dlqArn, entry.dlqMessageId),
        entity: 'redrive-ledger',
        shapeVersion: LEDGER_ENTRY_WITHOUT_ENVELOPE_ID,
        ...entry,
      };
      const names = Object.keys(item);
      return {
        Statement: `INSERT INTO "${table()}" VALUE {${names.map((n) => `'${n}': ?`).join(', ')}}`,
        Parameters: names.map((n) => item[n]),
      };
    });
    try {
      const out = await client().send(new BatchExecuteStatementCommand({ Statements }));
      return entries.map((_, i) => out.Responses?.[i] !== undefined && !out.Responses[i]?.Error);
    } catch (error) {
      throw asTransient('dynamodb:BatchExecuteStatement (ledger record)', error);
    }
  };

  const sentBatches = stepBatches(async (command) => await client().send(command));
  const deletedBatches = stepBatches(async (command) => await client().send(command));

  return {
    async begin(requests, nowMs) {
      if (requests.length === 0) return [];
      const simple = await read(requests);
      const updatedAt = nowDate().toISOString();
      const fresh: LedgerEntry[] = [];
      requests.forEach((r, i) => {
        // Park's entries carry no envelopeMessageId (un-park's do): the per-message path keeps those.
        if (simple[i] && r.envelopeMessageId === undefined)
          fresh.push({
            ...r,
            status: 'IN_PROGRESS',
            sentMessageId: null,
            dlqDeleted: false,
            duplicatePrevented: false,
            resent: false,
            takenOverFrom: [],
            deduplicationId: newDeduplicationId(),
            updatedAt,
          });
      });
      const recorded = await insert(fresh);
      const created = new Map(fresh.filter((_, i) => recorded[i]).map((e) => [e.dlqMessageId, e]));
      return Promise.all(
        requests.map((r): Promise<BeginOutcome> => {
          const entry = created.get(r.dlqMessageId);
          return entry ? Promise.resolve({ outcome: 'new', entry }) : options.ledger.begin(r, nowMs);
        }),
      );
    },
    async markSent(marks) {
      if (marks.length === 0) return new Set();
      const at = nowDate().toISOString();
      const r = await sentBatches.execute(
        marks,
        (m) => ({
          Statement: `UPDATE "${table()}" SET "status" = ? SET "sentMessageId" = ? SET "updatedAt" = ? ${where}`,
          Parameters: ['SENT', m.sentMessageId, at, ...whereOf(m)],
        }),
        Date.now() + MARK_DEADLINE_MS,
      );
      if (r.left.length > 0)
        throw new TransientError(
          `dynamodb:BatchExecuteStatement (ledger SENT): ${r.left.length} of ${marks.length} still not written`,
        );
      return new Set(r.conditionFailed.map((m) => m.dlqMessageId));
    },
    async markDeleted(marks) {
      if (marks.length === 0) return;
      const now = nowDate();
      const ttl = Math.floor(now.getTime() / 1000) + FINISHED_ENTRY_TTL_SECONDS;
      const r = await deletedBatches.execute(
        marks,
        (m) => ({
          Statement: `UPDATE "${table()}" SET "dlqDeleted" = ? SET "duplicatePrevented" = ? SET "updatedAt" = ? SET "${TABLE.ttlAttribute}" = ? ${where}`,
          Parameters: [true, m.duplicatePrevented, now.toISOString(), ttl, ...whereOf(m)],
        }),
        Date.now() + MARK_DEADLINE_MS,
      );
      // A condition that failed: another run took the entry over since; it marks it when it deletes.
      if (r.left.length > 0)
        throw new TransientError(
          `dynamodb:BatchExecuteStatement (ledger deleted): ${r.left.length} of ${marks.length} still not written`,
        );
    },
  };
}
