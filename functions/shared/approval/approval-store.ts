/**
 * The approval store: one DynamoDB item per Slack approval request, `APPROVAL#<approvalId>` /
 * `APPROVAL`, holding the Step Functions task token server-side (Slack only ever sees the opaque
 * approval id), plus one `INCIDENT#<incidentId>` / `SLACK#THREAD` item per incident naming the
 * Slack thread that progress and the final report go to.
 *
 * Status moves PENDING -> DECIDED (the first decision, taken with a conditional write: retries,
 * double clicks and a second approver change nothing) -> SENDING (one follow-up holds a lease
 * on the callback, so concurrent duplicate deliveries send once) -> CLOSED (the callback was sent,
 * or Step Functions said the task is gone). `expiresAt` (epoch seconds) is the table's TTL.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html
 */
import { createHash } from 'node:crypto';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { isConditionalCheckFailed, RecordNotFoundError, type TaskClosedReason } from '#platform/errors.js';
import { readShape, shapeOf } from '#platform/record-shapes.js';
import { keys, TABLE } from '#platform/table.js';

/**
 * Where an approval stands: PENDING (waiting for a click), DECIDED (first decision taken),
 * SENDING (one follow-up holds the callback lease), CLOSED (callback sent, or the task was gone).
 */
export type ApprovalStatus = 'PENDING' | 'DECIDED' | 'SENDING' | 'CLOSED';
/** What the approver chose. */
export type ApprovalDecision = 'approved' | 'rejected';
/**
 * Why an approval was closed: the callback reached Step Functions, or Step Functions answered
 * that the task is already gone (`TaskTimedOut`, `TaskDoesNotExist`, `InvalidToken`).
 */
export type ApprovalClosedReason = 'callback-sent' | TaskClosedReason;

/** A Slack user as the interaction payload names them. */
export interface SlackUser {
  /** Slack user id, e.g. `U0EXAMPLE1`. */
  id: string;
  /** Slack username (or name), shown in messages, e.g. `example.approver`. */
  username: string;
}

/** One approval request as stored. Times: `*At` epoch milliseconds, `expiresAt` epoch seconds. */
export interface ApprovalRecord {
  approvalId: string;
  /** The Step Functions task token: never leaves the server. */
  taskToken: string;
  incidentId: string;
  dlqArn: string;
  /** Slack channel id the request was posted to. */
  channel: string;
  /** Slack `ts` of the request message (the thread root), once posted. */
  messageTs: string | null;
  /** Slack user ids allowed to decide, copied from the queue registration when posted. */
  approvers: string[];
  status: ApprovalStatus;
  decision: ApprovalDecision | null;
  decidedBy: SlackUser | null;
  decidedAt: number | null;
  /** Free text the approver gave (rejections), or null. */
  reason: string | null;
  closedReason: ApprovalClosedReason | null;
  closedAt: number | null;
  /** While SENDING: when another follow-up may take the callback over, epoch milliseconds. */
  callbackLeaseUntil?: number | null;
  createdAt: number;
  /** How many times a post was attempted (a Lambda retry increments it). */
  postAttempts: number;
  /** TTL, epoch seconds: the approval state's TimeoutSeconds plus a margin after `createdAt`. */
  expiresAt: number;
  /**
   * The request message as posted (`{ text, blocks }` JSON, see `storedRequestMessage` in
   * slack-messages.ts; at most 100,000 UTF-8 bytes, far under DynamoDB's 400 KB item limit), so an
   * update such as "alarm cleared" can repeat the summary, plan and warnings. Null on records
   * written before it was stored, and until the message is posted.
   */
  requestMessage?: string | null;
  /**
   * The retention reminder this approval is owed (approval-reminders.ts), while it may still come
   * within the approval's window; absent or null otherwise. Times epoch milliseconds.
   */
  reminder?: { dueAt: number; deadline: number; leadSeconds: number; approvalEndsAt: number } | null;
  /** When the retention reminder was posted, epoch milliseconds. */
  remindedAt?: number | null;
}

/** The Slack thread of an incident (the approval message, or the first notification). */
export interface SlackThread {
  channel: string;
  ts: string;
  /** Set when the thread root is an approval request: its approval id. */
  approvalId?: string;
}

/** The result of {@link ApprovalStore.claimDecision}. */
export type ClaimResult =
  | { claimed: true; record: ApprovalRecord }
  | { claimed: false; existing: ApprovalRecord | null };

/** The approval store port (the DynamoDB adapter below, or a fake in unit tests). */
export interface ApprovalStore {
  /**
   * Creates the record unless one exists for the same approval id (same task token).
   * @returns `created: false` with the existing record when a previous attempt created it.
   */
  create(record: ApprovalRecord): Promise<{ created: true } | { created: false; existing: ApprovalRecord }>;
  /** Counts a post attempt on an existing record (a Lambda retry of RequestApproval). */
  countPostAttempt(approvalId: string): Promise<void>;
  get(approvalId: string): Promise<ApprovalRecord | null>;
  /**
   * Records where the request message was posted and, when given, the message itself (JSON).
   * @param requestMessage - the posted message as `storedRequestMessage` serialises it.
   * @throws RecordNotFoundError when there is no such approval.
   */
  setMessage(approvalId: string, thread: SlackThread, requestMessage?: string | null): Promise<void>;
  /**
   * Takes the first decision: PENDING -> DECIDED, conditionally. A second call (retry, double
   * click, second approver) gets `claimed: false` and the record as it stands.
   */
  claimDecision(
    approvalId: string,
    decision: { decision: ApprovalDecision; by: SlackUser; at: number; reason: string | null },
  ): Promise<ClaimResult>;
  /**
   * Takes the callback lease: DECIDED -> SENDING, or SENDING whose lease ended (the holder died).
   * @param leaseUntil - epoch milliseconds; @param now - epoch milliseconds.
   * @returns false when another follow-up holds the lease or the approval is CLOSED.
   */
  claimCallback(approvalId: string, now: number, leaseUntil: number): Promise<boolean>;
  /** Undoes a claim whose follow-up could not be scheduled (DECIDED -> PENDING, same decider only). */
  releaseDecision(approvalId: string, by: SlackUser): Promise<void>;
  /** Marks the record CLOSED (idempotent). */
  close(approvalId: string, reason: ApprovalClosedReason, at: number): Promise<void>;
  /**
   * Remembers the incident's Slack thread. First writer wins, unless `overwrite` (an approval
   * request always becomes the thread, so the latest approval is the one an expiry updates).
   * @param expiresAt - TTL, epoch seconds.
   * @returns the thread now stored.
   */
  putThread(
    incidentId: string,
    thread: SlackThread,
    expiresAt: number,
    options?: { overwrite?: boolean },
  ): Promise<SlackThread>;
  getThread(incidentId: string): Promise<SlackThread | null>;
}

/**
 * The opaque approval id for a task token: `apr-` + the first 32 hex characters of its SHA-256.
 * Deterministic, so a retried RequestApproval finds its own record instead of posting again;
 * one-way, so the id in a Slack button reveals nothing of the token.
 */
export function approvalIdForToken(taskToken: string): string {
  return `apr-${createHash('sha256').update(taskToken, 'utf8').digest('hex').slice(0, 32)}`;
}

/** The SK of the incident's Slack thread item, under `INCIDENT#<incidentId>`. */
export const SLACK_THREAD_SK = 'SLACK#THREAD';

/** Options of {@link createApprovalStore}. */
export interface ApprovalStoreOptions {
  /** @default the shared document client */
  client?: DynamoDBDocumentClient;
  /** @default pipelineConfig().tableName (`TABLE_NAME`) */
  tableName?: string;
}

const RECORD_FIELDS = [
  'approvalId',
  'taskToken',
  'incidentId',
  'dlqArn',
  'channel',
  'messageTs',
  'approvers',
  'status',
  'decision',
  'decidedBy',
  'decidedAt',
  'reason',
  'closedReason',
  'closedAt',
  'callbackLeaseUntil',
  'createdAt',
  'postAttempts',
  'expiresAt',
  'requestMessage',
  'reminder',
  'remindedAt',
] as const;

/** `gsi1pk` of the approvals that owe a retention reminder: the reminders' partition of the index. */
export const REMINDER_PARTITION = 'REMINDERS';

/** The index keys that list an approval among the reminders due at `dueAt` (sorted by time). */
export function reminderIndexKeys(approvalId: string, dueAt: number): Record<string, string> {
  return {
    [TABLE.keyIndex.partitionKey]: REMINDER_PARTITION,
    [TABLE.keyIndex.sortKey]: `${String(Math.max(0, dueAt)).padStart(15, '0')}#${approvalId}`,
  };
}

/** @throws UnknownShapeVersionError when a newer release wrote the record. */
export function toRecord(stored: Record<string, unknown> | undefined): ApprovalRecord | null {
  if (!stored) return null;
  const item = readShape('approval', stored, `approval ${String(stored.approvalId)}`);
  const out: Record<string, unknown> = {};
  for (const field of RECORD_FIELDS) out[field] = item[field] ?? null;
  return out as unknown as ApprovalRecord;
}

/**
 * The DynamoDB approval store.
 *
 * @throws the SDK's errors for anything but a failed condition (callers map them with `toRedriveError`).
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html
 */
export function createApprovalStore(options: ApprovalStoreOptions = {}): ApprovalStore {
  const client = () => options.client ?? documentClient();
  const TableName = options.tableName ?? pipelineConfig().tableName;
  const key = (approvalId: string) => ({ pk: keys.approval(approvalId), sk: keys.approvalSk });

  const get = async (approvalId: string) => {
    const out = await client().send(
      new GetCommand({ TableName, Key: key(approvalId), ConsistentRead: true }),
    );
    return toRecord(out.Item);
  };

  return {
    async create(record) {
      try {
        await client().send(
          new PutCommand({
            TableName,
            Item: {
              ...key(record.approvalId),
              ...shapeOf('approval'),
              ...(record.reminder ? reminderIndexKeys(record.approvalId, record.reminder.dueAt) : {}),
              ...record,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return { created: true };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        const existing = await get(record.approvalId);
        if (!existing) throw error;
        return { created: false, existing };
      }
    },

    async countPostAttempt(approvalId) {
      await client().send(
        new UpdateCommand({
          TableName,
          Key: key(approvalId),
          UpdateExpression: 'ADD postAttempts :one',
          ExpressionAttributeValues: { ':one': 1 },
        }),
      );
    },

    get,

    async setMessage(approvalId, thread, requestMessage) {
      const withMessage = typeof requestMessage === 'string';
      await client()
        .send(
          new UpdateCommand({
            TableName,
            Key: key(approvalId),
            UpdateExpression: `SET channel = :c, messageTs = :ts${withMessage ? ', requestMessage = :m' : ''}`,
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: {
              ':c': thread.channel,
              ':ts': thread.ts,
              ...(withMessage ? { ':m': requestMessage } : {}),
            },
          }),
        )
        .catch((error: unknown) => {
          throw isConditionalCheckFailed(error)
            ? new RecordNotFoundError(`approval ${approvalId}`, error)
            : error;
        });
    },

    async claimDecision(approvalId, d) {
      try {
        const out = await client().send(
          new UpdateCommand({
            TableName,
            Key: key(approvalId),
            UpdateExpression:
              'SET #s = :decided, decision = :d, decidedBy = :by, decidedAt = :at, reason = :r',
            ConditionExpression: '#s = :pending',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: {
              ':decided': 'DECIDED',
              ':pending': 'PENDING',
              ':d': d.decision,
              ':by': { id: d.by.id, username: d.by.username },
              ':at': d.at,
              ':r': d.reason,
            },
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { claimed: true, record: toRecord(out.Attributes) as ApprovalRecord };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        // The document client does not unmarshall the exception's Item: read the record again.
        return { claimed: false, existing: await get(approvalId) };
      }
    },

    async claimCallback(approvalId, now, leaseUntil) {
      try {
        await client().send(
          new UpdateCommand({
            TableName,
            Key: key(approvalId),
            UpdateExpression: 'SET #s = :sending, callbackLeaseUntil = :until',
            ConditionExpression: '#s = :decided OR (#s = :sending AND callbackLeaseUntil < :now)',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: {
              ':sending': 'SENDING',
              ':decided': 'DECIDED',
              ':until': leaseUntil,
              ':now': now,
            },
          }),
        );
        return true;
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        return false;
      }
    },

    async releaseDecision(approvalId, by) {
      try {
        await client().send(
          new UpdateCommand({
            TableName,
            Key: key(approvalId),
            UpdateExpression: 'SET #s = :pending, decision = :null, decidedBy = :null, decidedAt = :null',
            ConditionExpression: '#s = :decided AND decidedBy.id = :by',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: {
              ':pending': 'PENDING',
              ':decided': 'DECIDED',
              ':by': by.id,
              ':null': null,
            },
          }),
        );
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },

    async close(approvalId, reason, at) {
      try {
        await client().send(
          new UpdateCommand({
            TableName,
            Key: key(approvalId),
            UpdateExpression: 'SET #s = :closed, closedReason = :r, closedAt = :at',
            ConditionExpression: 'attribute_exists(pk) AND #s <> :closed',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':closed': 'CLOSED', ':r': reason, ':at': at },
          }),
        );
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },

    async putThread(incidentId, thread, expiresAt, putOptions = {}) {
      try {
        await client().send(
          new PutCommand({
            TableName,
            Item: {
              pk: keys.incident(incidentId),
              sk: SLACK_THREAD_SK,
              ...shapeOf('slack-thread'),
              ...thread,
              expiresAt,
            },
            ...(putOptions.overwrite ? {} : { ConditionExpression: 'attribute_not_exists(pk)' }),
          }),
        );
        return thread;
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        const existing = await this.getThread(incidentId);
        return existing ?? thread;
      }
    },

    async getThread(incidentId) {
      const out = await client().send(
        new GetCommand({ TableName, Key: { pk: keys.incident(incidentId), sk: SLACK_THREAD_SK } }),
      );
      const item = out.Item && readShape('slack-thread', out.Item, `Slack thread of incident ${incidentId}`);
      if (!item || typeof item.channel !== 'string' || typeof item.ts !== 'string') return null;
      return {
        channel: item.channel,
        ts: item.ts,
        ...(typeof item.approvalId === 'string' ? { approvalId: item.approvalId } : {}),
      };
    },
  };
}
