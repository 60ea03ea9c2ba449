/**
 * The Slack interaction core, in two halves so Slack gets its answer within 3 seconds:
 *
 * 1. {@link acknowledgeInteraction} (the Function URL request): verify the `v0` signature over the
 *    exact raw bytes, refuse stale timestamps, parse the `payload` form field, check
 *    the user against the approval's approvers, take the first decision with a conditional write,
 *    hand the rest to `defer`, and answer HTTP 200 with an EMPTY body.
 * 2. {@link runFollowUp} (after the ack; in Lambda an async self-invocation): `SendTaskSuccess`
 *    with `{ decision, approvedBy, reason }`, close the approval, and edit the Slack message
 *    through `response_url` (`replace_original`). A closed task edits the message to
 *    "expired or already decided" and closes the record, without retry.
 *
 * A **Cancel** click on a run's progress message (move-task/slack-progress.ts) is verified the same
 * way (signature, then the user against the run's approvers, first request wins) and recorded in
 * the ack itself (one conditional put and the audit entry): the ramp's next health gate reads the
 * cancel request, cancels the move task and ends the run `Cancelled`, reconciled.
 *
 * The final Slack message goes only through `response_url`, never as the ack body: a body would
 * race with (and could overwrite) the `response_url` update.
 *
 * @see https://api.slack.com/interactivity/handling#acknowledgment_response
 * @see https://api.slack.com/authentication/verifying-requests-from-slack
 */

import type { ApprovalDecision, ApprovalRecord, ApprovalStore, SlackUser } from '#approval/approval-store.js';
import {
  alreadyCancelledMessage,
  CANCEL_ACTION_ID,
  notRunningMessage,
  parseCancelValue,
  rampProgressMessage,
} from '#approval/ramp-progress-message.js';
import { progressView, type RampProgressStore } from '#approval/ramp-progress-store.js';
import {
  APPROVE_ACTION_ID,
  alreadyDecidedMessage,
  decidedMessage,
  expiredMessage,
  notApproverMessage,
  REJECT_ACTION_ID,
} from '#approval/slack-messages.js';
import {
  isAllowedResponseUrl,
  type ResponseUrlMessage,
  type ResponseUrlPoster,
} from '#approval/slack-response-url.js';
import type { AuditTrail } from '#incident/audit-trail.js';
import type { CancelRequests } from '#incident/cancel-requests.js';
import { InvalidInputError, TaskClosedError } from '#platform/errors.js';
import { formatIssues, logger } from '#platform/middleware.js';
import * as z from '#platform/zod.js';
import { headerOf, rawBodyOf, verifySlackSignature } from './slack-signature.js';
import type { ApprovalOutput, TaskCallbacks } from './task-callbacks.js';

/** The Function URL request fields used (payload format 2.0, as API Gateway HTTP APIs send it too). */
export const FunctionUrlRequest = z.object({
  headers: z._default(z.record(z.string(), z.optional(z.string())), {}),
  body: z.optional(z.string()),
  isBase64Encoded: z.optional(z.boolean()),
});
export type FunctionUrlRequest = z.infer<typeof FunctionUrlRequest>;

/** What the Function URL answers. The body is always empty (see the module doc). */
export interface InteractionResponse {
  statusCode: 200 | 400 | 401 | 500;
  headers: Record<string, string>;
  body: string;
}

/** The `block_actions` payload fields used. Unknown fields are kept but not read. */
export const BlockActionsPayload = z.looseObject({
  type: z.literal('block_actions'),
  // Bounded: these are written to the approval record and a DynamoDB item holds at most 400 KB.
  user: z.object({
    id: z.string().check(z.minLength(1), z.maxLength(64)),
    username: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
    name: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
  }),
  response_url: z.url({ protocol: /^https?$/ }).check(z.maxLength(2048)),
  actions: z
    .array(
      z.object({
        action_id: z.enum([APPROVE_ACTION_ID, REJECT_ACTION_ID, CANCEL_ACTION_ID]),
        value: z.string().check(z.minLength(1), z.maxLength(256)),
      }),
    )
    .check(z.minLength(1)),
});
export type BlockActionsPayload = z.infer<typeof BlockActionsPayload>;

/** Work left after the ack. Serialisable: it travels in an async Lambda invocation. */
export const FollowUp = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('callback'),
    approvalId: z.string().check(z.minLength(1)),
    responseUrl: z.string().check(z.minLength(1)),
  }),
  z.object({
    kind: z.literal('reply'),
    responseUrl: z.string().check(z.minLength(1)),
    message: z.object({
      text: z.string(),
      blocks: z.optional(z.array(z.any())),
      replace_original: z.optional(z.boolean()),
      response_type: z.optional(z.enum(['ephemeral', 'in_channel'])),
    }),
  }),
]);
export type FollowUp = z.infer<typeof FollowUp>;

/** Ports of {@link acknowledgeInteraction}. */
export interface AcknowledgeDeps {
  signingSecret: string;
  approvals: ApprovalStore;
  /** Schedules the follow-up to run after the ack (async self-invoke in Lambda). */
  defer: (followUp: FollowUp) => Promise<void>;
  /** Now, epoch milliseconds. */
  now: () => number;
  /**
   * `response_url` prefixes accepted (the Slack port's allow-list). When set, a request naming
   * another URL is a 400 before any write, instead of a decision whose reply can never be posted.
   */
  allowedResponseUrlPrefixes?: readonly string[];
  /**
   * The Cancel button's ports: the run's progress record (its approvers), the cancel requests the
   * ramp's next gate reads, and the audit trail. Absent: a Cancel click is answered "no longer
   * running" and changes nothing.
   */
  cancels?: {
    progress: Pick<RampProgressStore, 'get'>;
    requests: Pick<CancelRequests, 'request'>;
    audit: Pick<AuditTrail, 'record'>;
  };
}

/** Ports of {@link runFollowUp}. */
export interface FollowUpDeps {
  approvals: ApprovalStore;
  slack: ResponseUrlPoster;
  callbacks: TaskCallbacks;
  /** Now, epoch milliseconds. */
  now: () => number;
  /**
   * The incident's audit trail: the decision is recorded there once the task has it, so the
   * approver outlives the approval record's TTL. Absent: not recorded (unit tests).
   */
  audit?: Pick<AuditTrail, 'record'>;
}

/** How long a follow-up holds the callback before a retry may take over, milliseconds. */
export const CALLBACK_LEASE_MS = 30_000;

const EMPTY_200: InteractionResponse = { statusCode: 200, headers: {}, body: '' };

/**
 * Verifies, parses and decides an interaction request, then defers the slow part.
 *
 * Answers: 401 (empty body) for a missing, malformed, stale or wrong signature, with nothing read
 * or written; 400 with the problems for a signed but malformed payload, nothing written; else 200
 * with an empty body. Only the first decision on an approval is taken (conditional write); later
 * clicks (retries with `x-slack-retry-num`, double clicks, a second approver) get a
 * `response_url` update saying who decided.
 *
 * @throws the store's or `defer`'s errors (after undoing a claim whose follow-up could not be
 *   scheduled, so the user can click again).
 */
export async function acknowledgeInteraction(
  request: FunctionUrlRequest,
  deps: AcknowledgeDeps,
): Promise<InteractionResponse> {
  const rawBody = rawBodyOf(request);
  const verdict = verifySlackSignature({
    rawBody,
    timestamp: headerOf(request.headers, 'x-slack-request-timestamp'),
    signature: headerOf(request.headers, 'x-slack-signature'),
    signingSecret: deps.signingSecret,
    nowSeconds: Math.floor(deps.now() / 1000),
  });
  if (!verdict.ok) {
    logger.warn('refused Slack request', { reason: verdict.reason });
    return { statusCode: 401, headers: {}, body: '' };
  }

  let payload: BlockActionsPayload;
  try {
    payload = parseInteractionBody(rawBody);
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    logger.warn(error.message, { details: [...error.details] });
    return { statusCode: 400, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: error.message };
  }

  if (
    deps.allowedResponseUrlPrefixes &&
    !isAllowedResponseUrl(payload.response_url, deps.allowedResponseUrlPrefixes)
  ) {
    const message = `invalid Slack request: payload.response_url: must start with one of ${deps.allowedResponseUrlPrefixes.join(', ')}`;
    logger.warn(message);
    return { statusCode: 400, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: message };
  }

  const action = payload.actions[0] as BlockActionsPayload['actions'][number];
  const user: SlackUser = {
    id: payload.user.id,
    username: payload.user.username ?? payload.user.name ?? payload.user.id,
  };
  const reply = (message: ResponseUrlMessage) =>
    deps.defer({ kind: 'reply', responseUrl: payload.response_url, message }).then(() => EMPTY_200);
  if (action.action_id === CANCEL_ACTION_ID) return acknowledgeCancel(action.value, user, reply, deps);
  const decision: ApprovalDecision = action.action_id === APPROVE_ACTION_ID ? 'approved' : 'rejected';
  logger.info('Slack interaction', {
    approvalId: action.value,
    user: user.id,
    decision,
    retryNum: headerOf(request.headers, 'x-slack-retry-num'),
  });

  const record = await deps.approvals.get(action.value);
  if (!record || record.expiresAt * 1000 <= deps.now()) {
    return reply({ ...expiredMessage(), replace_original: true });
  }
  if (!record.approvers.includes(user.id)) {
    return reply({ ...notApproverMessage(), response_type: 'ephemeral', replace_original: false });
  }
  if (record.status !== 'PENDING') return reply(stateMessage(record));

  const claim = await deps.approvals.claimDecision(record.approvalId, {
    decision,
    by: user,
    at: deps.now(),
    reason: decision === 'rejected' ? `rejected in Slack by ${user.username}` : null,
  });
  if (!claim.claimed) {
    return reply(
      claim.existing ? stateMessage(claim.existing) : { ...expiredMessage(), replace_original: true },
    );
  }
  try {
    await deps.defer({ kind: 'callback', approvalId: record.approvalId, responseUrl: payload.response_url });
  } catch (error) {
    await deps.approvals.releaseDecision(record.approvalId, user);
    throw error;
  }
  return EMPTY_200;
}

/**
 * A Cancel click on a run's progress message, verified like an Approve (the signature is checked
 * already): the user must be one of the run's approvers, the ramp must still run, and the first
 * request wins (a conditional put). It records the cancel request the ramp's next health gate
 * reads (that gate cancels the move task and ends the run `Cancelled`, reconciled) and the
 * `cancel-requested` audit entry, then replaces the progress message with one saying who asked,
 * without the button. Everything else is an ephemeral reply to the clicking user, nothing written.
 */
async function acknowledgeCancel(
  value: string,
  user: SlackUser,
  reply: (message: ResponseUrlMessage) => Promise<InteractionResponse>,
  deps: AcknowledgeDeps,
): Promise<InteractionResponse> {
  const ephemeral = (message: ResponseUrlMessage) =>
    reply({ ...message, response_type: 'ephemeral', replace_original: false });
  const run = parseCancelValue(value);
  const progress =
    run && deps.cancels ? await deps.cancels.progress.get(run.incidentId, run.executionName) : null;
  if (!run || !deps.cancels || !progress) return ephemeral(notRunningMessage());
  if (!progress.approvers.includes(user.id)) return ephemeral(notApproverMessage());
  if (progress.ended) return ephemeral(notRunningMessage());
  const at = deps.now();
  const asked = await deps.cancels.requests.request({
    incidentId: run.incidentId,
    executionName: run.executionName,
    by: user.username,
    via: 'slack',
    at,
    reason: `cancelled in Slack by ${user.username}`,
  });
  if (!asked.recorded)
    return ephemeral(alreadyCancelledMessage(asked.existing ?? { by: 'someone', via: 'slack', at }));
  logger.info('cancel requested in Slack', { ...run, user: user.id });
  await deps.cancels.audit.record({
    incidentId: run.incidentId,
    entryId: `run#${run.executionName}#cancel`,
    kind: 'cancel-requested',
    at,
    by: user.username,
    via: 'slack',
    executionName: run.executionName,
    text: `Slack user ${user.id}`,
  });
  return reply({
    ...rampProgressMessage(progressView(progress, { by: user.username, via: 'slack', at }, at)),
    replace_original: true,
  });
}

/**
 * Decodes the form body AFTER verification: the `payload` field, URL-decoded (`+` as space),
 * JSON-parsed and checked.
 *
 * @throws InvalidInputError naming the field (`payload`, `payload.actions.0.action_id`, ...).
 */
export function parseInteractionBody(rawBody: Uint8Array): BlockActionsPayload {
  const form = new URLSearchParams(Buffer.from(rawBody).toString('utf8'));
  const text = form.get('payload');
  if (text === null) throw new InvalidInputError('invalid Slack request', ['payload: is required']);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError('invalid Slack request', ['payload: must be JSON'], error);
  }
  const parsed = BlockActionsPayload.safeParse(json);
  if (!parsed.success) {
    throw new InvalidInputError(
      'invalid Slack request',
      formatIssues(parsed.error).map((issue) => `payload.${issue}`),
      parsed.error,
    );
  }
  return parsed.data;
}

function stateMessage(record: ApprovalRecord): ResponseUrlMessage {
  if (record.closedReason && record.closedReason !== 'callback-sent') {
    return { ...expiredMessage(), replace_original: true };
  }
  if (record.decision && record.decidedBy) {
    return { ...alreadyDecidedMessage(record.decision, record.decidedBy.username), replace_original: true };
  }
  return { ...expiredMessage(), replace_original: true };
}

/**
 * Runs the work deferred by {@link acknowledgeInteraction}.
 *
 * `callback`: takes the callback lease (DECIDED -> SENDING, conditional), sends `SendTaskSuccess`
 * once, closes the approval and replaces the Slack message with the decision. A closed task
 * (`TaskTimedOut`, `TaskDoesNotExist`, `InvalidToken`) closes the approval and replaces the message
 * with "expired or already decided"; it is not retried and nothing is redriven. A duplicate
 * delivery (the approval is SENDING under another follow-up's lease, or CLOSED) sends nothing and
 * leaves Slack alone.
 *
 * @returns what happened, for logs and tests.
 * @throws other SDK errors (the async invocation retries; it takes the callback over once the
 *   lease of {@link CALLBACK_LEASE_MS} has passed).
 * @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_SendTaskSuccess.html
 */
export async function runFollowUp(
  followUp: FollowUp,
  deps: FollowUpDeps,
): Promise<'replied' | 'sent' | 'closed' | 'skipped'> {
  if (followUp.kind === 'reply') {
    await deps.slack.respond(followUp.responseUrl, followUp.message as ResponseUrlMessage);
    return 'replied';
  }
  const record = await deps.approvals.get(followUp.approvalId);
  if (!record) {
    await deps.slack.respond(followUp.responseUrl, { ...expiredMessage(), replace_original: true });
    return 'skipped';
  }
  // One follow-up holds the callback; a duplicate delivery (even a concurrent one) stops here and
  // leaves the Slack update to the holder.
  const nowMs = deps.now();
  const claimed = await deps.approvals.claimCallback(record.approvalId, nowMs, nowMs + CALLBACK_LEASE_MS);
  if (!claimed || !record.decision || !record.decidedBy) return 'skipped';
  const output: ApprovalOutput = {
    decision: record.decision,
    approvedBy: record.decidedBy.username,
    reason: record.reason,
  };
  try {
    await deps.callbacks.sendTaskSuccess(record.taskToken, output);
  } catch (error) {
    if (!(error instanceof TaskClosedError)) throw error;
    logger.warn('approval task is closed', { approvalId: record.approvalId, reason: error.reason });
    await deps.approvals.close(record.approvalId, error.reason, deps.now());
    await deps.slack.respond(followUp.responseUrl, { ...expiredMessage(), replace_original: true });
    return 'closed';
  }
  await deps.approvals.close(record.approvalId, 'callback-sent', deps.now());
  await deps.audit?.record({
    incidentId: record.incidentId,
    entryId: `approval#${record.approvalId}#decision`,
    kind: record.decision,
    at: record.decidedAt ?? deps.now(),
    by: record.decidedBy.username,
    via: 'slack',
    approvalId: record.approvalId,
    text: `Slack user ${record.decidedBy.id}${record.reason ? `: ${record.reason}` : ''}`,
  });
  await deps.slack.respond(followUp.responseUrl, {
    ...decidedMessage(record.decision, record.decidedBy.username, record.decidedAt ?? deps.now()),
    replace_original: true,
  });
  return 'sent';
}
