/**
 * ApprovalReminder: a scheduled check (an EventBridge rule, every 10 minutes: infra/constructs/slack-endpoint.ts)
 * that posts the retention reminder of every waiting approval whose earliest retention deadline
 * has come within the rule's lead (functions/shared/approval/approval-reminders.ts), once each.
 * docs/slack.md, "Retention reminder".
 *
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-rule-schedule.html
 */
import { type RemindDeps, type ReminderOutcome, remindDueApprovals } from '#approval/approval-reminders.js';
import * as z from '#platform/zod.js';

/** The EventBridge "Scheduled Event" (only the fields that name it are checked). */
export const ScheduledEvent = z.looseObject({
  source: z.literal('aws.events'),
  'detail-type': z.literal('Scheduled Event'),
});
export type ScheduledEvent = z.infer<typeof ScheduledEvent>;

/** What one check did. */
export interface ApprovalReminderResult {
  reminded: number;
  outcomes: ReminderOutcome[];
}

/** Runs one check. @throws the Slack port's errors (the reminder is given back for the next check). */
export async function approvalReminder(
  _event: ScheduledEvent,
  deps: RemindDeps,
): Promise<ApprovalReminderResult> {
  const outcomes = await remindDueApprovals(deps);
  return { reminded: outcomes.filter((o) => o.code === 'reminded').length, outcomes };
}
