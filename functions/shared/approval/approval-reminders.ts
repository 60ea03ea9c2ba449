/**
 * The retention reminder: while an approval waits, one reply in the incident's Slack thread once
 * the DLQ's earliest retention deadline is near, so the approvers act before SQS deletes messages.
 * The rule is data ({@link RETENTION_REMINDER_RULE}); the scheduled `approval-reminder` function
 * runs {@link remindDueApprovals}. docs/slack.md, "Retention reminder".
 *
 * An approval owes a reminder when RequestApproval stores it with `reminder` (only when the due
 * time falls inside the approval's window); the index lists it under {@link REMINDER_PARTITION}
 * until it is reminded or no longer pending.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-basic-architecture.html
 */
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { isConditionalCheckFailed } from '#platform/errors.js';
import { queryIndexPartition } from '#platform/index-query.js';
import { keys, TABLE } from '#platform/table.js';
import { type ApprovalRecord, REMINDER_PARTITION, reminderIndexKeys, toRecord } from './approval-store.js';
import type { SlackApi } from './slack-client.js';
import { retentionReminderMessage } from './slack-messages.js';

/** When to remind: `deadline - now <= max(minLeadSeconds, runTimeFactor x the run's estimate)`. */
export interface RetentionReminderRule {
  /** Seconds before the deadline that always leave time to approve and run. */
  readonly minLeadSeconds: number;
  /** A long run needs this many times its estimated wall time before the deadline. */
  readonly runTimeFactor: number;
}

/** Remind when the deadline is 3 h away, or twice the run's estimate when that is longer. */
export const RETENTION_REMINDER_RULE: RetentionReminderRule = { minLeadSeconds: 3 * 3600, runTimeFactor: 2 };

/**
 * The reminder an approval owes, or null when its due time falls after the approval's window (the
 * window ends first: nothing to remind of) or there is no deadline.
 * @param deadline - the earliest retention deadline, epoch ms; @param estimatedRunSeconds - the
 *   forecast's wall time, seconds; @param approvalEndsAt - the approval window's end, epoch ms.
 */
export function reminderFor(
  deadline: number | null,
  estimatedRunSeconds: number | null,
  approvalEndsAt: number,
  rule: RetentionReminderRule = RETENTION_REMINDER_RULE,
): NonNullable<ApprovalRecord['reminder']> | null {
  if (deadline === null) return null;
  const leadSeconds = Math.max(
    rule.minLeadSeconds,
    Math.ceil(rule.runTimeFactor * (estimatedRunSeconds ?? 0)),
  );
  const dueAt = deadline - leadSeconds * 1000;
  return dueAt < approvalEndsAt ? { dueAt, deadline, leadSeconds, approvalEndsAt } : null;
}

/** What one check did with one listed approval. */
export type ReminderOutcome =
  | { code: 'reminded'; approvalId: string; deadline: number; leftSeconds: number; leadSeconds: number }
  | { code: 'not-pending'; approvalId: string; status: ApprovalRecord['status'] }
  | { code: 'window-ended'; approvalId: string; approvalEndsAt: number }
  | { code: 'taken'; approvalId: string };

/** The reminders' storage: the approval records listed under {@link REMINDER_PARTITION}. */
export interface ApprovalReminders {
  /** Approvals listed for a reminder due at or before `now` (epoch ms), earliest first. */
  due(now: number): Promise<ApprovalRecord[]>;
  /** Takes the reminder (pending, not reminded yet) and unlists it. @returns false when not taken. */
  claim(approvalId: string, at: number): Promise<boolean>;
  /** Gives a taken reminder back (its post failed), listed again. */
  release(record: ApprovalRecord): Promise<void>;
  /** Unlists an approval that can no longer be reminded (decided, or its window ended). */
  drop(approvalId: string): Promise<void>;
}

/** The DynamoDB {@link ApprovalReminders}. */
export function createApprovalReminders(
  options: { client?: DynamoDBDocumentClient; tableName?: string } = {},
): ApprovalReminders {
  const client = () => options.client ?? documentClient();
  const TableName = options.tableName ?? pipelineConfig().tableName;
  const Key = (approvalId: string) => ({ pk: keys.approval(approvalId), sk: keys.approvalSk });
  const names = { '#gpk': TABLE.keyIndex.partitionKey, '#gsk': TABLE.keyIndex.sortKey };
  return {
    async due(now) {
      const items = await queryIndexPartition(client(), TableName, REMINDER_PARTITION);
      return items
        .map((item) => toRecord(item) as ApprovalRecord)
        .filter((r) => r.reminder !== null && r.reminder !== undefined && r.reminder.dueAt <= now);
    },
    async claim(approvalId, at) {
      try {
        await client().send(
          new UpdateCommand({
            TableName,
            Key: Key(approvalId),
            UpdateExpression: 'SET remindedAt = :at REMOVE #gpk, #gsk',
            ConditionExpression:
              '#s = :pending AND (attribute_not_exists(remindedAt) OR attribute_type(remindedAt, :null))',
            ExpressionAttributeNames: { ...names, '#s': 'status' },
            ExpressionAttributeValues: { ':at': at, ':pending': 'PENDING', ':null': 'NULL' },
          }),
        );
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return false;
        throw error;
      }
    },
    async release(record) {
      const index = reminderIndexKeys(record.approvalId, record.reminder?.dueAt ?? 0);
      await client().send(
        new UpdateCommand({
          TableName,
          Key: Key(record.approvalId),
          UpdateExpression: 'SET remindedAt = :null, #gpk = :gpk, #gsk = :gsk',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: {
            ':null': null,
            ':gpk': index[TABLE.keyIndex.partitionKey],
            ':gsk': index[TABLE.keyIndex.sortKey],
          },
        }),
      );
    },
    async drop(approvalId) {
      await client().send(
        new UpdateCommand({
          TableName,
          Key: Key(approvalId),
          UpdateExpression: 'REMOVE #gpk, #gsk',
          ExpressionAttributeNames: names,
        }),
      );
    },
  };
}

/** Ports of {@link remindDueApprovals}. */
export interface RemindDeps {
  reminders: ApprovalReminders;
  slack: Pick<SlackApi, 'postMessage'>;
  /** Now, epoch milliseconds. */
  now: () => number;
}

/**
 * Posts each due reminder once, in its approval's thread, mentioning the approvers. A reminder is
 * taken with a conditional write before it is posted, so two concurrent checks post it once; a
 * failed post gives it back for the next check, the other approvals are still reminded, and the
 * first error propagates once the check is through.
 */
export async function remindDueApprovals(deps: RemindDeps): Promise<ReminderOutcome[]> {
  const now = deps.now();
  const outcomes: ReminderOutcome[] = [];
  const failures: unknown[] = [];
  for (const record of await deps.reminders.due(now)) {
    const { approvalId } = record;
    const reminder = record.reminder as NonNullable<ApprovalRecord['reminder']>;
    if (record.status !== 'PENDING') {
      await deps.reminders.drop(approvalId);
      outcomes.push({ code: 'not-pending', approvalId, status: record.status });
      continue;
    }
    if (now >= reminder.approvalEndsAt) {
      await deps.reminders.drop(approvalId);
      outcomes.push({ code: 'window-ended', approvalId, approvalEndsAt: reminder.approvalEndsAt });
      continue;
    }
    // Not posted yet (RequestApproval between its write and its post): the next check sees it.
    if (record.messageTs === null) continue;
    if (!(await deps.reminders.claim(approvalId, now))) {
      outcomes.push({ code: 'taken', approvalId });
      continue;
    }
    const leftSeconds = Math.floor((reminder.deadline - now) / 1000);
    try {
      await deps.slack.postMessage(
        record.channel,
        retentionReminderMessage({ deadline: reminder.deadline, nowMs: now, approvers: record.approvers }),
        { threadTs: record.messageTs },
      );
    } catch (error) {
      await deps.reminders.release(record);
      failures.push(error);
      continue;
    }
    outcomes.push({
      code: 'reminded',
      approvalId,
      deadline: reminder.deadline,
      leftSeconds,
      leadSeconds: reminder.leadSeconds,
    });
  }
  if (failures.length > 0) throw failures[0];
  return outcomes;
}
