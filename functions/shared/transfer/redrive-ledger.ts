/**
 * The redrive ledger: one item per idempotency key (`KEY#<key>` / `REDRIVE`) recording that the
 * pipeline is taking a message out of the DLQ, so a retried step never sends it twice
 * (DESIGN.md "Conservation": record, then send, then delete).
 *
 * An entry names the run (`redriveId`), what is done with the message (`kind`: redrive, park or
 * discard), the DLQ MessageId it was taken from, and where it went. DLQ MessageIds are stable while
 * a message stays in the DLQ, so after a crash the same MessageId tells "this is the message I was
 * handling" apart from "the same key came back to the DLQ as a new message":
 *
 * | ledger entry for (key, run)       | message in hand has the same MessageId | a different MessageId |
 * | --------------------------------- | -------------------------------------- | --------------------- |
 * | none, or from an earlier run      | `new`: send                            | `new`: send           |
 * | IN_PROGRESS (crash before/at send)| `resume`: send again, mark `resent`    | `other-message`       |
 * | SENT (crash between send/delete)  | `already-sent`: delete only            | `other-message`       |
 *
 * `resume` re-sends: the crash may have happened after SQS accepted the send but before SENT was
 * written. On FIFO queues the MessageDeduplicationId derived from the key makes that resend a no-op
 * within the 5-minute deduplication window; on standard queues it can deliver a duplicate, which
 * the consumer package (`@dlq-redrive/consumer-idempotency`) absorbs by key. Never re-sending would
 * instead risk losing the message when the crash came before the send, and loss is the one outcome
 * the pipeline must not produce.
 *
 * Entries carry `gsi1pk = RUN#<redriveId>` so a retried step lists its own entries through the
 * `byIdempotencyKey` index (eventually consistent: a retry seconds after a crash normally sees them).
 * All writes are conditional; `ConditionalCheckFailed` becomes data, never an error.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { errorMessage, isConditionalCheckFailed, isRetryable, TransientError } from '#platform/errors.js';
import { readShape, shapeOf } from '#platform/record-shapes.js';
import { keys, TABLE } from '#platform/table.js';

/** What the pipeline does with the message. */
export type LedgerKind = 'redrive' | 'park' | 'discard';
/** IN_PROGRESS: recorded, not yet sent. SENT: the destination accepted it (or, for discard, the decision is final). */
export type LedgerStatus = 'IN_PROGRESS' | 'SENT';

/** A ledger entry. */
export interface LedgerEntry {
  key: string;
  redriveId: string;
  kind: LedgerKind;
  status: LedgerStatus;
  dlqArn: string;
  /** The MessageId the message had in the DLQ. */
  dlqMessageId: string;
  /** Queue URL it was sent to (null for discard). */
  destinationUrl: string | null;
  /** MessageId the destination gave it. */
  sentMessageId: string | null;
  /** True once DeleteMessage on the DLQ succeeded. */
  dlqDeleted: boolean;
  /** True when a retry found the entry SENT with the message still in the DLQ and deleted it without sending. */
  duplicatePrevented: boolean;
  /** When the DLQ message becomes visible again if this step crashed, epoch milliseconds. */
  visibleAfter: number;
  /**
   * True once a retry resumed the entry from IN_PROGRESS and sent again: the crashed attempt may
   * have sent too, so the destination may hold a duplicate (harmless on FIFO within 5 minutes).
   */
  resent: boolean;
  updatedAt: string;
}

/** What {@link RedriveLedger.begin} found. See the table in the module comment. */
export type BeginOutcome =
  | { outcome: 'new' }
  | { outcome: 'resume'; entry: LedgerEntry }
  | { outcome: 'already-sent'; entry: LedgerEntry }
  | { outcome: 'other-message'; entry: LedgerEntry };

/** The ledger port. */
export interface RedriveLedger {
  /** Records IN_PROGRESS for a key in this run, or reports the entry that is already there. */
  begin(
    entry: Omit<
      LedgerEntry,
      'status' | 'sentMessageId' | 'dlqDeleted' | 'duplicatePrevented' | 'resent' | 'updatedAt'
    >,
  ): Promise<BeginOutcome>;
  /** IN_PROGRESS -> SENT, only for the same run and DLQ message. */
  markSent(key: string, redriveId: string, dlqMessageId: string, sentMessageId: string | null): Promise<void>;
  /** Records that the DLQ copy is gone; `duplicatePrevented` when it was deleted without a second send. */
  markDeleted(
    key: string,
    redriveId: string,
    dlqMessageId: string,
    duplicatePrevented?: boolean,
  ): Promise<void>;
  get(key: string): Promise<LedgerEntry | undefined>;
  /** Every entry of a run (all kinds), via the `RUN#<redriveId>` index key. */
  listRun(redriveId: string): Promise<LedgerEntry[]>;
}

const ENTITY = 'redrive-ledger';
type Item = Record<string, unknown>;

/** @throws UnknownShapeVersionError when a newer release wrote the entry. */
function toEntry(stored: Item): LedgerEntry {
  const item = readShape('ledger-entry', stored, `ledger entry ${String(stored.key)}`);
  return {
    key: String(item.key),
    redriveId: String(item.redriveId),
    kind: item.kind as LedgerKind,
    status: item.status as LedgerStatus,
    dlqArn: String(item.dlqArn),
    dlqMessageId: String(item.dlqMessageId),
    destinationUrl: (item.destinationUrl as string | null | undefined) ?? null,
    sentMessageId: (item.sentMessageId as string | null | undefined) ?? null,
    dlqDeleted: item.dlqDeleted === true,
    duplicatePrevented: item.duplicatePrevented === true,
    visibleAfter: Number(item.visibleAfter ?? 0),
    resent: item.resent === true,
    updatedAt: String(item.updatedAt ?? ''),
  };
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
  const now = () => (options.now ? options.now() : new Date()).toISOString();
  const itemKey = (key: string) => ({ pk: keys.idempotencyKey(key), sk: keys.redriveLedger });
  const wrap = (action: string, error: unknown) =>
    isRetryable(error) ? new TransientError(`${action}: ${errorMessage(error)}`, error) : error;

  const classify = (existing: LedgerEntry, dlqMessageId: string): BeginOutcome => {
    if (existing.dlqMessageId !== dlqMessageId) return { outcome: 'other-message', entry: existing };
    return existing.status === 'SENT'
      ? { outcome: 'already-sent', entry: existing }
      : { outcome: 'resume', entry: existing };
  };

  const markResent = async (key: string, redriveId: string, dlqMessageId: string) => {
    try {
      await client().send(
        new UpdateCommand({
          TableName: table(),
          Key: itemKey(key),
          UpdateExpression: 'SET resent = :t, updatedAt = :now',
          ConditionExpression: 'redriveId = :rid AND dlqMessageId = :dlqmid',
          ExpressionAttributeValues: {
            ':t': true,
            ':now': now(),
            ':rid': redriveId,
            ':dlqmid': dlqMessageId,
          },
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) return;
      throw wrap('dynamodb:UpdateItem (ledger resent)', error);
    }
  };

  return {
    async begin(entry) {
      const item: Item = {
        ...itemKey(entry.key),
        [TABLE.keyIndex.partitionKey]: `RUN#${entry.redriveId}`,
        [TABLE.keyIndex.sortKey]: keys.idempotencyKey(entry.key),
        entity: ENTITY,
        ...shapeOf('ledger-entry'),
        ...entry,
        status: 'IN_PROGRESS',
        sentMessageId: null,
        dlqDeleted: false,
        duplicatePrevented: false,
        resent: false,
        updatedAt: now(),
      };
      try {
        await client().send(
          new PutCommand({
            TableName: table(),
            Item: item,
            ConditionExpression: 'attribute_not_exists(pk) OR redriveId <> :rid',
            ExpressionAttributeValues: { ':rid': entry.redriveId },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { outcome: 'new' };
      } catch (error) {
        if (isConditionalCheckFailed(error)) {
          const old = error.Item ? toEntry(unmarshall(error.Item)) : await this.get(entry.key);
          if (!old) throw new TransientError(`ledger entry for ${entry.key} vanished during begin`, error);
          const found = classify(old, entry.dlqMessageId);
          // The caller sends again: record it, so Reconcile can report a possible duplicate.
          if (found.outcome === 'resume') await markResent(entry.key, entry.redriveId, entry.dlqMessageId);
          return found;
        }
        throw wrap('dynamodb:PutItem (ledger)', error);
      }
    },
    async markSent(key, redriveId, dlqMessageId, sentMessageId) {
      try {
        await client().send(
          new UpdateCommand({
            TableName: table(),
            Key: itemKey(key),
            UpdateExpression: 'SET #s = :sent, sentMessageId = :mid, updatedAt = :now',
            ConditionExpression: 'redriveId = :rid AND dlqMessageId = :dlqmid',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: {
              ':sent': 'SENT',
              ':mid': sentMessageId,
              ':now': now(),
              ':rid': redriveId,
              ':dlqmid': dlqMessageId,
            },
          }),
        );
      } catch (error) {
        throw wrap('dynamodb:UpdateItem (ledger SENT)', error);
      }
    },
    async markDeleted(key, redriveId, dlqMessageId, duplicatePrevented = false) {
      try {
        await client().send(
          new UpdateCommand({
            TableName: table(),
            Key: itemKey(key),
            UpdateExpression: 'SET dlqDeleted = :t, duplicatePrevented = :dup, updatedAt = :now',
            ConditionExpression: 'redriveId = :rid AND dlqMessageId = :dlqmid',
            ExpressionAttributeValues: {
              ':t': true,
              ':dup': duplicatePrevented,
              ':now': now(),
              ':rid': redriveId,
              ':dlqmid': dlqMessageId,
            },
          }),
        );
      } catch (error) {
        // Another run took the key over since: nothing of ours left to mark.
        if (isConditionalCheckFailed(error)) return;
        throw wrap('dynamodb:UpdateItem (ledger deleted)', error);
      }
    },
    async get(key) {
      try {
        const out = await client().send(
          new GetCommand({ TableName: table(), Key: itemKey(key), ConsistentRead: true }),
        );
        return out.Item ? toEntry(out.Item) : undefined;
      } catch (error) {
        throw wrap('dynamodb:GetItem (ledger)', error);
      }
    },
    async listRun(redriveId) {
      const entries: LedgerEntry[] = [];
      let start: Record<string, unknown> | undefined;
      try {
        do {
          const out = await client().send(
            new QueryCommand({
              TableName: table(),
              IndexName: TABLE.keyIndex.name,
              KeyConditionExpression: '#pk = :pk',
              ExpressionAttributeNames: { '#pk': TABLE.keyIndex.partitionKey },
              ExpressionAttributeValues: { ':pk': `RUN#${redriveId}` },
              ...(start ? { ExclusiveStartKey: start } : {}),
            }),
          );
          for (const item of out.Items ?? []) if (item.entity === ENTITY) entries.push(toEntry(item));
          start = out.LastEvaluatedKey;
        } while (start);
      } catch (error) {
        throw wrap('dynamodb:Query (ledger run)', error);
      }
      return entries;
    },
  };
}
