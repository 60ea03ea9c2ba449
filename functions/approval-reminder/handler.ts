/**
 * ApprovalReminder: the EventBridge schedule's "Scheduled Event" in, {@link ApprovalReminderResult}
 * out. Environment: `TABLE_NAME`, `SLACK_SECRET_ARN` (or `SLACK_BOT_TOKEN`).
 *
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-rule-schedule.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { standardMiddleware } from '#platform/middleware.js';
import { type ApprovalReminderResult, approvalReminder, ScheduledEvent } from './approval-reminder.js';
import { createApprovalReminderDeps } from './deps.js';

/** The Lambda handler. */
export const handler = middy<ScheduledEvent, ApprovalReminderResult>()
  .use(standardMiddleware())
  .use(parser({ schema: ScheduledEvent }))
  .handler(async (event) => approvalReminder(event, await createApprovalReminderDeps()));
