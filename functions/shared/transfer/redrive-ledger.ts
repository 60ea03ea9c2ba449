/**
 * The redrive ledger: one entry per DLQ message the pipeline takes out of the DLQ by hand (sample,
 * park, discard), `DLQ#<dlqArn>` / `LEDGER#<dlqMessageId>`, recording the decision before anything
 * is sent (DESIGN.md "Conservation": record, then send, then delete). It is also the evidence
 * Reconcile reads: an envelope is REDRIVEN, PARKED or DISCARDED by hand only when its DLQ message
 * has an entry that says so.
 *
 * An entry is keyed by the DLQ MessageId, which is stable while a message stays in the DLQ, so a
 * message in hand either has an entry (a crashed attempt took it) or not. It names the incident,
 * the run that owns it (`redriveId`, one execution: Lambda retries of a step share it, a console
 * restart is another run), the kind (redrive, park, discard), the idempotency key and where it went.
 *
 * | entry for the message in hand              | outcome of {@link RedriveLedger.begin}                   |
 * | ------------------------------------------ | ------------------------------------------------------ |
 * | none                                       | `new`: send                                            |
 * | this run, IN_PROGRESS (crash before/at send) | `resume`: send again, mark `resent`                  |
 * | this run, SENT (crash between send/delete) | `already-sent`: delete only                            |
 * | another run, lease (`visibleAfter`) not over | `busy`: leave the message alone                      |
 * | another run, lease over, IN_PROGRESS       | taken over, `resume`: send again, `resent` (possible duplicate) |
 * | another run, lease over, SENT              | taken over, `already-sent`: delete only                |
 *
 * Another run's entry is never overwritten: a takeover is a conditional update that keeps the
 * entry's kind, destination and history and appends the earlier owner to `takenOverFrom`.
 *
 * `resume` re-sends: the crash may have happened after SQS accepted the send but before SENT was
 * written. On FIFO queues the entry's recorded MessageDeduplicationId (`deduplicationId`, the
 * same for every resend of the entry, new for every entry) makes that resend a no-op within the
 * 5-minute deduplication interval, while a later run's copy of the same key is delivered; on standard queues it can deliver a duplicate, which
 * the consumer package (`@dlq-redrive/consumer-idempotency`) absorbs by key, and which Reconcile
 * reports (`possibleDuplicateSends`). Never re-sending would instead risk losing the message when
 * the crash came before the send, and loss is the one outcome the pipeline must not produce.
 *
 * Crash recovery lists a DLQ's entries from the base table with consistent reads ({@link
 * RedriveLedger.list}): a retry seconds after a crash sees every entry the crashed attempt wrote.
 * A finished entry (the DLQ copy deleted) expires after {@link FINISHED_ENTRY_TTL_SECONDS}, longer
 * than SQS's longest retention, so no message it describes can still be in the DLQ.
 * All writes are conditional; `ConditionalCheckFailed` becomes data, never an error.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html
 */
import { randomUUID } from 'node:crypto';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DeleteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { asTransient, isConditionalCheckFailed, TransientError } from '#platform/errors.js';
import { LEDGER_ENTRY_WITHOUT_ENVELOPE_ID, readShape, shapeOf } from '#platform/record-shapes.js';
import { keys, TABLE } from '#platform/table.js';

/** What the pipeline does with the message. */
export type LedgerKind = 'redrive' | 'park' | 'discard';
/** IN_PROGRESS: recorded, maybe not sent. SENT: the destination accepted it (or, for discard, the decision is final). */
export type LedgerStatus = 'IN_PROGRESS' | 'SENT';

/** A finished entry lives this long, seconds: 15 days, a day more than SQS's longest retention. */
export const FINISHED_ENTRY_TTL_SECONDS = 15 * 24 * 3600;

/** A ledger entry. */
export interface LedgerEntry {
  /** The idempotency key sent with the copy (Park uses `<key>@<messageId>`). */
  key: string;
  dlqArn: string;
  /** The MessageId the message had in the DLQ (the entry's identity). */
  dlqMessageId: string;
  /**
   * The DLQ MessageId of the envelope the entry settles, when the message in hand is another copy
   * of that message: un-parking, `dlqMessageId` is the parked copy's MessageId in the parking
   * queue, and this is the envelope's. Absent: `dlqMessageId`. See {@link envelopeIdOf}.
   */
  envelopeMessageId?: string;
  /** The incident whose run took the message. */
  incidentId: string;
  /** The run that owns the entry now (`plan.runId`). */
  redriveId: string;
  kind: LedgerKind;
  status: LedgerStatus;
  /** Queue URL it was sent to (null for discard). */
  destinationUrl: string | null;
  /** MessageId the destination gave it. */
  sentMessageId: string | null;
  /** True once DeleteMessage on the DLQ succeeded. */
  dlqDeleted: boolean;
  /** True when a retry found the entry SENT with the message still in the DLQ and deleted it without sending. */
  duplicatePrevented: boolean;
  /**
   * The owner's lease, epoch milliseconds: when the DLQ message becomes visible again if the
   * owner crashed. Another run takes the entry over only after it.
   */
  visibleAfter: number;
  /**
   * True once a retry or another run resumed the entry from IN_PROGRESS and sent again: the
   * crashed attempt may have sent too, so the destination may hold a duplicate (harmless on FIFO
   * within 5 minutes).
   */
  resent: boolean;
  /** Runs that owned the entry before, oldest first (each takeover appends one). */
  takenOverFrom: string[];
  /**
   * The MessageDeduplicationId of the entry's copy to a FIFO destination, recorded before the
   * first send and reused by every resend of the entry (a retry, a restart, a takeover), so SQS
   * drops a resend within its 5-minute interval; a new entry (a new run's copy, an un-park) gets a
   * new one, so SQS delivers it. Absent on entries written before it was recorded: their copies
   * were sent with the key's id (`deduplicationIdOf` in outgoing-copy.ts).
   */
  deduplicationId?: string;
  updatedAt: string;
}

/** A new entry's {@link LedgerEntry.deduplicationId}: random, 32 hex characters. */
export function newDeduplicationId(): string {
  return randomUUID().replaceAll('-', '');
}

/** What {@link RedriveLedger.begin} found. See the table in the module comment. */
export type BeginOutcome =
  | { outcome: 'new'; entry: LedgerEntry }
  | { outcome: 'resume'; entry: LedgerEntry; takenOver: boolean }
  | { outcome: 'already-sent'; entry: LedgerEntry; takenOver: boolean }
  | { outcome: 'busy'; entry: LedgerEntry };

/** The fields a caller gives {@link RedriveLedger.begin}. */
export type LedgerRequest = Pick<
  LedgerEntry,
  'key' | 'dlqArn' | 'dlqMessageId' | 'incidentId' | 'redriveId' | 'kind' | 'destinationUrl' | 'visibleAfter'
> &
  Partial<Pick<LedgerEntry, 'envelopeMessageId'>>;

/** The ledger port. */
export interface RedriveLedger {
  /**
   * Records IN_PROGRESS for the message in hand, or reports (and, when its lease is over, takes
   * over) the entry that is already there.
   * @param nowMs - epoch milliseconds, compared with the existing entry's `visibleAfter`.
   */
  begin(request: LedgerRequest, nowMs: number): Promise<BeginOutcome>;
  /** IN_PROGRESS -> SENT, only while `redriveId` owns the entry. */
  markSent(
    dlqArn: string,
    dlqMessageId: string,
    redriveId: string,
    sentMessageId: string | null,
  ): Promise<void>;
  /** Records that the DLQ copy is gone; `duplicatePrevented` when it was deleted without a second send. */
  markDeleted(
    dlqArn: string,
    dlqMessageId: string,
    redriveId: string,
    duplicatePrevented?: boolean,
  ): Promise<void>;
  /**
   * Removes an IN_PROGRESS entry of `redriveId` whose send SQS refused outright (queue gone,
   * access denied, message rejected): nothing was sent, so the message is free again.
   */
  abandon(dlqArn: string, dlqMessageId: string, redriveId: string): Promise<void>;
  /** One entry, read consistently. */
  get(dlqArn: string, dlqMessageId: string): Promise<LedgerEntry | undefined>;
  /** Every entry of a DLQ (all incidents and runs, unexpired), from the base table, read consistently. */
  list(dlqArn: string): Promise<LedgerEntry[]>;
}

const ENTITY = 'redrive-ledger';
type Item = Record<string, unknown>;

/** @throws UnknownShapeVersionError when a newer release wrote the entry. */
function toEntry(stored: Item): LedgerEntry {
  const item = readShape(
    'ledger-entry',
    stored,
    `ledger entry ${String(stored.dlqMessageId)} in ${String(stored.dlqArn)}`,
  );
  return {
    key: String(item.key),
    dlqArn: String(item.dlqArn),
    dlqMessageId: String(item.dlqMessageId),
    ...(typeof item.envelopeMessageId === 'string' ? { envelopeMessageId: item.envelopeMessageId } : {}),
    incidentId: String(item.incidentId ?? item.redriveId),
    redriveId: String(item.redriveId),
    kind: item.kind as LedgerKind,
    status: item.status as LedgerStatus,
    destinationUrl: (item.destinationUrl as string | null | undefined) ?? null,
    sentMessageId: (item.sentMessageId as string | null | undefined) ?? null,
    dlqDeleted: item.dlqDeleted === true,
    duplicatePrevented: item.duplicatePrevented === true,
    visibleAfter: Number(item.visibleAfter ?? 0),
    resent: item.resent === true,
    takenOverFrom: Array.isArray(item.takenOverFrom) ? item.takenOverFrom.map(String) : [],
    ...(typeof item.deduplicationId === 'string' ? { deduplicationId: item.deduplicationId } : {}),
    updatedAt: String(item.updatedAt ?? ''),
  };
}

/** The DLQ MessageId of the envelope an entry settles (un-park entries name it; others are keyed by it). */
export function envelopeIdOf(entry: Pick<LedgerEntry, 'dlqMessageId' | 'envelopeMessageId'>): string {
  return entry.envelopeMessageId ?? entry.dlqMessageId;
}

/** True when the entry's message went where the entry says (SENT, or deleted from the DLQ). */
export function entryDone(entry: Pick<LedgerEntry, 'status' | 'dlqDeleted'>): boolean {
  return entry.status === 'SENT' || entry.dlqDeleted;
}

/**
 * Creates the ledger.
 * @param options.client - @default the shared document client
 * @param options.tableName - @default pipelineConfig().tableName (`TABLE_NAME`)
 */
export function createRedriveLedger(
  options: { client?: DynamoDBDocumentClient; tableName?: string; now?: () => Date } = {},
): RedriveLedger {
  const client = () => options.client ?? documentClient();
  const table = () => options.tableName ?? pipelineConfig().tableName;
  const nowDate = () => (options.now ? options.now() : new Date());
  const now = () => nowDate().toISOString();
  const itemKey = (dlqArn: string, dlqMessageId: string) => ({
    [TABLE.partitionKey]: keys.dlq(dlqArn),
    [TABLE.sortKey]: keys.ledger(dlqMessageId),
  });

  /**
   * The message's entry and, given its idempotency key, the version-1 entry of that key (see
   * {@link carryOverLegacy}), read consistently in one BatchGetItem. A key left unprocessed
   * (throttling) is a TransientError: nothing was written yet, and the step's retry reads again.
   */
  const read = async (
    dlqArn: string,
    dlqMessageId: string,
    legacyOf?: string,
  ): Promise<{ old: LedgerEntry | undefined; legacy: Item | undefined }> => {
    const t = table();
    const Keys: Item[] = [itemKey(dlqArn, dlqMessageId)];
    if (legacyOf !== undefined)
      Keys.push({ [TABLE.partitionKey]: keys.idempotencyKey(legacyOf), [TABLE.sortKey]: keys.legacyLedger });
    let out: BatchGetCommandOutput;
    try {
      out = await client().send(
        new BatchGetCommand({ RequestItems: { [t]: { Keys, ConsistentRead: true } } }),
      );
    } catch (error) {
      throw asTransient('dynamodb:BatchGetItem (ledger)', error);
    }
    if (out.UnprocessedKeys?.[t])
      throw new TransientError('dynamodb:BatchGetItem (ledger): unprocessed keys');
    const items = out.Responses?.[t] ?? [];
    const legacy = items.find((i) => i[TABLE.sortKey] === keys.legacyLedger);
    const entry = items.find((i) => i !== legacy);
    return { old: entry && toEntry(entry), legacy };
  };
  const get = async (dlqArn: string, dlqMessageId: string) => (await read(dlqArn, dlqMessageId)).old;

  /** Puts `entry` at its message's key unless one is there. @returns false when one was. */
  const putNew = async (entry: LedgerEntry): Promise<boolean> => {
    try {
      await client().send(
        new PutCommand({
          TableName: table(),
          Item: {
            ...itemKey(entry.dlqArn, entry.dlqMessageId),
            entity: ENTITY,
            // Version 3 only where it differs from 2: a release before it still reads the rest.
            ...(entry.envelopeMessageId === undefined
              ? { shapeVersion: LEDGER_ENTRY_WITHOUT_ENVELOPE_ID }
              : shapeOf('ledger-entry')),
            ...entry,
          },
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw asTransient('dynamodb:PutItem (ledger)', error);
    }
  };

  const create = async (request: LedgerRequest): Promise<LedgerEntry | undefined> => {
    const entry: LedgerEntry = {
      ...request,
      status: 'IN_PROGRESS',
      sentMessageId: null,
      dlqDeleted: false,
      duplicatePrevented: false,
      resent: false,
      takenOverFrom: [],
      deduplicationId: newDeduplicationId(),
      updatedAt: now(),
    };
    return (await putNew(entry)) ? entry : undefined;
  };

  /** Same run resumes its IN_PROGRESS entry: record that it sends again. */
  const markResent = async (entry: LedgerEntry): Promise<void> => {
    try {
      await client().send(
        new UpdateCommand({
          TableName: table(),
          Key: itemKey(entry.dlqArn, entry.dlqMessageId),
          UpdateExpression: 'SET resent = :t, updatedAt = :now',
          ConditionExpression: 'redriveId = :rid',
          ExpressionAttributeValues: { ':t': true, ':now': now(), ':rid': entry.redriveId },
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) return;
      throw asTransient('dynamodb:UpdateItem (ledger resent)', error);
    }
  };

  /** Another run's expired entry becomes ours; false when it changed meanwhile. */
  const takeOver = async (old: LedgerEntry, request: LedgerRequest): Promise<LedgerEntry | undefined> => {
    const resend = !entryDone(old);
    const updatedAt = now();
    try {
      await client().send(
        new UpdateCommand({
          TableName: table(),
          Key: itemKey(old.dlqArn, old.dlqMessageId),
          UpdateExpression:
            'SET redriveId = :rid, incidentId = :inc, visibleAfter = :va, updatedAt = :now, ' +
            'takenOverFrom = list_append(if_not_exists(takenOverFrom, :empty), :from)' +
            (resend ? ', resent = :t' : ''),
          ConditionExpression: 'redriveId = :oldRid AND updatedAt = :oldAt',
          ExpressionAttributeValues: {
            ':rid': request.redriveId,
            ':inc': request.incidentId,
            ':va': request.visibleAfter,
            ':now': updatedAt,
            ':empty': [],
            ':from': [old.redriveId],
            ':oldRid': old.redriveId,
            ':oldAt': old.updatedAt,
            ...(resend ? { ':t': true } : {}),
          },
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) return undefined;
      throw asTransient('dynamodb:UpdateItem (ledger takeover)', error);
    }
    return {
      ...old,
      redriveId: request.redriveId,
      incidentId: request.incidentId,
      visibleAfter: request.visibleAfter,
      takenOverFrom: [...old.takenOverFrom, old.redriveId],
      resent: old.resent || resend,
      updatedAt,
    };
  };

  /**
   * A version-1 entry of the same DLQ message (`KEY#<key>` / `REDRIVE`, written before the ledger
   * moved to one entry per DLQ message) copied to the message's key, so a run in flight across
   * the upgrade is resumed, never sent twice. @returns true when one was carried over.
   */
  const carryOverLegacy = async (request: LedgerRequest, legacy: Item | undefined): Promise<boolean> => {
    if (!legacy || legacy.dlqArn !== request.dlqArn || legacy.dlqMessageId !== request.dlqMessageId)
      return false;
    const { [TABLE.partitionKey]: _pk, [TABLE.sortKey]: _sk, ...fields } = legacy;
    await putNew(toEntry({ ...fields, incidentId: fields.incidentId ?? request.incidentId }));
    return true;
  };

  return {
    async begin(request, nowMs) {
      // A concurrent writer can change the entry between our read and our write: decide again.
      for (let attempt = 0; attempt < 3; attempt++) {
        const first = await read(
          request.dlqArn,
          request.dlqMessageId,
          attempt === 0 ? request.key : undefined,
        );
        const old = first.old;
        if (!old) {
          if (await carryOverLegacy(request, first.legacy)) continue;
          const entry = await create(request);
          if (entry) return { outcome: 'new', entry };
          continue;
        }
        if (old.redriveId === request.redriveId) {
          if (entryDone(old)) return { outcome: 'already-sent', entry: old, takenOver: false };
          await markResent(old);
          return { outcome: 'resume', entry: { ...old, resent: true }, takenOver: false };
        }
        if (old.visibleAfter > nowMs && !old.dlqDeleted) return { outcome: 'busy', entry: old };
        const entry = await takeOver(old, request);
        if (!entry) continue;
        return entryDone(old)
          ? { outcome: 'already-sent', entry, takenOver: true }
          : { outcome: 'resume', entry, takenOver: true };
      }
      throw new TransientError(
        `ledger entry of ${request.dlqMessageId} in ${request.dlqArn} kept changing during begin`,
      );
    },
    async markSent(dlqArn, dlqMessageId, redriveId, sentMessageId) {
      try {
        await client().send(
          new UpdateCommand({
            TableName: table(),
            Key: itemKey(dlqArn, dlqMessageId),
            UpdateExpression: 'SET #s = :sent, sentMessageId = :mid, updatedAt = :now',
            ConditionExpression: 'redriveId = :rid',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: {
              ':sent': 'SENT',
              ':mid': sentMessageId,
              ':now': now(),
              ':rid': redriveId,
            },
          }),
        );
      } catch (error) {
        throw asTransient('dynamodb:UpdateItem (ledger SENT)', error);
      }
    },
    async markDeleted(dlqArn, dlqMessageId, redriveId, duplicatePrevented = false) {
      try {
        await client().send(
          new UpdateCommand({
            TableName: table(),
            Key: itemKey(dlqArn, dlqMessageId),
            UpdateExpression: 'SET dlqDeleted = :t, duplicatePrevented = :dup, updatedAt = :now, #ttl = :ttl',
            ConditionExpression: 'redriveId = :rid',
            ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
            ExpressionAttributeValues: {
              ':t': true,
              ':dup': duplicatePrevented,
              ':now': now(),
              ':ttl': Math.floor(nowDate().getTime() / 1000) + FINISHED_ENTRY_TTL_SECONDS,
              ':rid': redriveId,
            },
          }),
        );
      } catch (error) {
        // Another run took the entry over since: it marks it when it deletes.
        if (isConditionalCheckFailed(error)) return;
        throw asTransient('dynamodb:UpdateItem (ledger deleted)', error);
      }
    },
    async abandon(dlqArn, dlqMessageId, redriveId) {
      try {
        await client().send(
          new DeleteCommand({
            TableName: table(),
            Key: itemKey(dlqArn, dlqMessageId),
            ConditionExpression: 'redriveId = :rid AND #s = :inProgress',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':rid': redriveId, ':inProgress': 'IN_PROGRESS' },
          }),
        );
      } catch (error) {
        if (isConditionalCheckFailed(error)) return;
        throw asTransient('dynamodb:DeleteItem (ledger abandon)', error);
      }
    },
    get,
    async list(dlqArn) {
      const entries: LedgerEntry[] = [];
      let start: Record<string, unknown> | undefined;
      try {
        do {
          const out = await client().send(
            new QueryCommand({
              TableName: table(),
              ConsistentRead: true,
              KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
              ExpressionAttributeNames: { '#pk': TABLE.partitionKey, '#sk': TABLE.sortKey },
              ExpressionAttributeValues: { ':pk': keys.dlq(dlqArn), ':prefix': keys.ledgerPrefix },
              ...(start ? { ExclusiveStartKey: start } : {}),
            }),
          );
          for (const item of out.Items ?? []) if (item.entity === ENTITY) entries.push(toEntry(item));
          start = out.LastEvaluatedKey;
        } while (start);
      } catch (error) {
        throw asTransient('dynamodb:Query (ledger)', error);
      }
      return entries;
    },
  };
}
