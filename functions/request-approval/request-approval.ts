/**
 * RequestApproval (`lambda:invoke.waitForTaskToken`): posts the incident summary, the plan and
 * its warnings to the queue's Slack channel with Approve / Reject buttons, and keeps the task token
 * server-side in the approval record. The buttons carry only the opaque approval id.
 *
 * Idempotent per task token: the approval id is derived from the token, the record is created
 * with a conditional write, and a Lambda retry that finds the message already posted returns
 * without posting again. (A crash between `chat.postMessage` and recording its `ts` can still post
 * twice: Slack has no idempotency key; both messages carry the same approval id, so the first
 * click on either decides.)
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/connect-to-resource.html#connect-wait-token
 * @see https://api.slack.com/methods/chat.postMessage
 */

import { reminderFor } from '#approval/approval-reminders.js';
import { type ApprovalRecord, type ApprovalStore, approvalIdForToken } from '#approval/approval-store.js';
import type { SlackApi } from '#approval/slack-client.js';
import { approvalRequestMessage, storedRequestMessage } from '#approval/slack-messages.js';
import { type AuditTrail, auditPlanOf } from '#incident/audit-trail.js';
import type { IncidentSummary, QueueRegistration } from '#inventory/model.js';
import { InvalidInputError } from '#platform/errors.js';
import { logger } from '#platform/middleware.js';
import * as z from '#platform/zod.js';

/** Default approval window when neither the payload nor `APPROVAL_TIMEOUT_SECONDS` says. */
export const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 3600;
/** Kept past the approval's timeout so a late click still finds its record (and gets "expired"). */
export const APPROVAL_RECORD_MARGIN_SECONDS = 900;

/** The Task's `Payload`: `{ plan, preflight, taskToken }` (only the fields used are checked). */
export const RequestApprovalInput = z.object({
  plan: z.looseObject({
    incidentId: z.string().check(z.minLength(1)),
    dlqArn: z.string().check(z.minLength(1)),
    mode: z.enum(['redrive', 'sample-only', 'dry-run']),
    destinationArn: z.nullable(z.string()),
    sampleSize: z.number().check(z.int(), z.gte(1)),
    rampRates: z.array(z.number().check(z.int(), z.gte(1), z.lte(500))),
    dwellSeconds: z.number().check(z.int(), z.gte(1)),
    discardPoison: z.boolean(),
    requestedBy: z.string(),
  }),
  preflight: z.looseObject({
    dlqDepth: z.number().check(z.int(), z.gte(0)),
    sourceArns: z.array(z.string()),
    fifo: z.boolean(),
    earliestRetentionDeadline: z.nullable(z.number()),
    warnings: z.array(z.string()),
    /** The run's forecast: its estimated wall time sets the retention reminder's lead. */
    forecast: z.optional(z.looseObject({ estimatedSeconds: z.number().check(z.gte(0)) })),
  }),
  /** Up to 2048 characters, as SendTaskSuccess accepts. @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_SendTaskSuccess.html */
  taskToken: z.string().check(z.minLength(1), z.maxLength(2048)),
  /** The approval state's TimeoutSeconds, when the ASL passes it. */
  timeoutSeconds: z.optional(z.number().check(z.int(), z.gte(1))),
});
export type RequestApprovalInput = z.infer<typeof RequestApprovalInput>;

/** What the function returns (Step Functions ignores it: the callback is the task's output). */
export interface RequestApprovalResult {
  approvalId: string;
  channel: string;
  ts: string;
  /** False when a previous attempt had already posted the message. */
  posted: boolean;
}

/** Ports of {@link requestApproval}. */
export interface RequestApprovalDeps {
  approvals: ApprovalStore;
  slack: Pick<SlackApi, 'postMessage'>;
  /** Reads triage's incident summary; null for a console start without an incident record. */
  incidentSummary: (incidentId: string) => Promise<IncidentSummary | null>;
  /** The queue's registration (defaults applied). */
  registration: (dlqArn: string) => Promise<Pick<QueueRegistration, 'slackChannel' | 'approvers'>>;
  /** Channel used when the registration names none (`SLACK_DEFAULT_CHANNEL`). */
  defaultChannel?: string | undefined;
  /** Approval window, seconds, when the payload does not carry one. @default 3600 */
  timeoutSeconds?: number | undefined;
  /** Now, epoch milliseconds. */
  now: () => number;
  /** The incident's audit trail: who was asked to approve which plan. Absent: not recorded. */
  audit?: Pick<AuditTrail, 'record'>;
}

/**
 * Posts the approval request once per task token and stores the token with the approval.
 *
 * @throws InvalidInputError naming `slackChannel` when neither the registration nor the default
 *   names a channel (before any write).
 * @throws the Slack port's errors (`Redrive.Transient` is retried by the ASL; the retry does not
 *   post twice once the message ts is recorded).
 */
export async function requestApproval(
  input: RequestApprovalInput,
  deps: RequestApprovalDeps,
): Promise<RequestApprovalResult> {
  const { plan, preflight, taskToken } = input;
  const registration = await deps.registration(plan.dlqArn);
  const channel = registration.slackChannel ?? deps.defaultChannel;
  if (!channel) {
    throw new InvalidInputError('no Slack channel for the approval', [
      `slackChannel: is required in the registration of ${plan.dlqArn} (or set SLACK_DEFAULT_CHANNEL)`,
    ]);
  }
  const approvalId = approvalIdForToken(taskToken);
  const nowMs = deps.now();
  const timeoutSeconds = input.timeoutSeconds ?? deps.timeoutSeconds ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS;
  const record: ApprovalRecord = {
    approvalId,
    taskToken,
    incidentId: plan.incidentId,
    dlqArn: plan.dlqArn,
    channel,
    messageTs: null,
    approvers: [...registration.approvers],
    status: 'PENDING',
    decision: null,
    decidedBy: null,
    decidedAt: null,
    reason: null,
    closedReason: null,
    closedAt: null,
    createdAt: nowMs,
    postAttempts: 1,
    expiresAt: Math.ceil(nowMs / 1000) + timeoutSeconds + APPROVAL_RECORD_MARGIN_SECONDS,
    // Owed only when the deadline's reminder falls inside the approval's window.
    reminder: reminderFor(
      preflight.earliestRetentionDeadline,
      preflight.forecast?.estimatedSeconds ?? null,
      nowMs + timeoutSeconds * 1000,
    ),
  };

  const created = await deps.approvals.create(record);
  if (!created.created) {
    const { existing } = created;
    if (existing.messageTs) {
      logger.info('approval already posted', { approvalId, ts: existing.messageTs });
      return { approvalId, channel: existing.channel, ts: existing.messageTs, posted: false };
    }
    await deps.approvals.countPostAttempt(approvalId);
  }

  const summary = await deps.incidentSummary(plan.incidentId);
  const preflightWarnings =
    registration.approvers.length === 0
      ? [...preflight.warnings, 'no approvers are registered for this queue: nobody can approve from Slack']
      : preflight.warnings;
  const message = approvalRequestMessage({
    approvalId,
    incidentId: plan.incidentId,
    dlqArn: plan.dlqArn,
    summary,
    plan,
    preflight: { ...preflight, warnings: preflightWarnings },
    nowMs,
    expiresAtMs: nowMs + timeoutSeconds * 1000,
  });
  const posted = await deps.slack.postMessage(channel, message);
  // Kept so a later update (alarm cleared) can repeat the summary, plan and warnings.
  await deps.approvals.setMessage(approvalId, posted, storedRequestMessage(message));
  await deps.approvals.putThread(
    plan.incidentId,
    { channel: posted.channel, ts: posted.ts, approvalId },
    record.expiresAt + 30 * 86_400,
    { overwrite: true },
  );
  await deps.audit?.record({
    incidentId: plan.incidentId,
    entryId: `approval#${approvalId}#requested`,
    kind: 'approval-requested',
    at: nowMs,
    by: plan.requestedBy,
    via: 'slack',
    approvalId,
    plan: auditPlanOf(plan),
    text: `asked ${registration.approvers.length} approver(s) in ${posted.channel}; expires ${new Date(nowMs + timeoutSeconds * 1000).toISOString()}`,
  });
  logger.info('approval posted', { approvalId, channel: posted.channel, ts: posted.ts });
  return { approvalId, channel: posted.channel, ts: posted.ts, posted: true };
}
