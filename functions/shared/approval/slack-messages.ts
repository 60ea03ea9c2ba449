/**
 * Block Kit builders for every Slack message the pipeline sends: the approval request (incident
 * summary, plan, warnings, Approve / Reject), the decided / expired / already-decided updates, the
 * "you are not an approver" reply and the thread notices. Pure functions of their input.
 *
 * Buttons carry only the opaque approval id as `value`; the task token never reaches Slack.
 *
 * @see https://api.slack.com/reference/block-kit/blocks
 * @see https://api.slack.com/reference/surfaces/formatting#escaping
 */
import type { KnownBlock } from '@slack/types';
import type { AuditPlan } from '#incident/audit-trail.js';
import { stepSecondsText, summaryWarningsBeside } from '#incident/on-call-report.js';
import type { Classification, IncidentSummary } from '#inventory/model.js';
import { clockText, formatDuration, isoUtc } from '#platform/clock-text.js';
import * as z from '#platform/zod.js';
import type { SlackMessage } from './slack-client.js';

/** `action_id` of the Approve button. */
export const APPROVE_ACTION_ID = 'approve_redrive';
/** `action_id` of the Reject button. */
export const REJECT_ACTION_ID = 'reject_redrive';
/** `block_id` of the actions block. */
export const APPROVAL_BLOCK_ID = 'redrive_approval';

/** The text shown when a task is gone or the record no longer exists. */
export const EXPIRED_TEXT = 'This request has expired or was already decided.';
/** The text shown to a user who is not on the queue's approver list. */
export const NOT_APPROVER_TEXT = 'You are not an approver for this queue; nothing was changed.';

const DAY_MS = 86_400_000;
const MAX_CAUSES = 3;
const MAX_REASON_CHARS = 200;
/** Error classes are attribute values a consumer sets: shown cut to this many characters. */
const MAX_ERROR_CLASS_CHARS = 100;
/** Source queues named in the summary line; the rest are counted. */
const MAX_LISTED_SOURCES = 10;
/** Slack refuses a message whose section text passes 3,000 characters (`invalid_blocks`). */
export const MAX_SECTION_CHARS = 3000;

/** The plan fields the approval shows (a subset of `$.plan`; the same the audit trail keeps). */
export interface ApprovalPlanView extends Omit<AuditPlan, 'mode'> {
  mode: 'redrive' | 'sample-only' | 'dry-run';
}

/** The preflight fields the approval shows (a subset of `$.preflight`). */
export interface ApprovalPreflightView {
  dlqDepth: number;
  sourceArns: string[];
  fifo: boolean;
  /** Epoch milliseconds, or null. */
  earliestRetentionDeadline: number | null;
  warnings: string[];
  /** The return window (seconds): a move task's step lasts at least this long. */
  verifyWindowSeconds?: number;
}

/** Everything the approval request message shows. */
export interface ApprovalRequestView {
  approvalId: string;
  incidentId: string;
  dlqArn: string;
  /** Triage's summary, or null for a console start without an incident record. */
  summary: IncidentSummary | null;
  plan: ApprovalPlanView;
  preflight: ApprovalPreflightView;
  /** Now, epoch milliseconds (for ages and time left). */
  nowMs: number;
  /** When the approval times out, epoch milliseconds. */
  expiresAtMs: number;
}

/** Escapes `&`, `<`, `>` for mrkdwn (everything else is literal). */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The queue name at the end of an SQS ARN. */
export function queueNameOf(arn: string): string {
  return arn.split(':').pop() ?? arn;
}

export { formatDuration };

const iso = isoUtc;

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * Cuts escaped mrkdwn to `max` characters: at the last line break that fits when there is one,
 * never inside an `&amp;`-style entity, and says so with an ellipsis line.
 * @see https://api.slack.com/reference/block-kit/blocks#section
 */
export function fitSection(text: string, max = MAX_SECTION_CHARS): string {
  if (text.length <= max) return text;
  const room = text.slice(0, max - 2);
  const lineEnd = room.lastIndexOf('\n');
  const cut = lineEnd > max / 2 ? room.slice(0, lineEnd) : room.replace(/&[a-z]*$/, '');
  return `${cut}\n…`;
}

function sourceList(sources: string[]): string {
  if (sources.length === 0) return '';
  const shown = sources.slice(0, MAX_LISTED_SOURCES).map((q) => `\`${q}\``);
  const more = sources.length - shown.length;
  return ` from ${shown.join(', ')}${more > 0 ? ` and ${more} more source queues` : ''}`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The warnings an approver must read before approving, derived from the plan, preflight and
 * summary (preflight's own warnings come first, then these, without duplicates):
 * - a retention deadline less than 24 h away.
 * - FIFO ordering within a message group is not preserved relative to new traffic.
 * - poison / permanent messages are parked first (a move task cannot skip messages), or
 *   discarded when the plan says so; messages with no known source queue.
 */
export function approvalWarnings(view: ApprovalRequestView): string[] {
  const out = [...view.preflight.warnings];
  // A console start without triage has no summary: its deadline comes from preflight.
  const summary: IncidentSummary = view.summary ?? {
    messageCount: view.preflight.dlqDepth,
    countBySource: {},
    causes: [],
    countByClassification: { transient: 0, permanent: 0, poison: 0, systemic: 0, unknown: 0 },
    oldestMessageAgeMs: null,
    earliestRetentionDeadline: null,
    expiringWithin24h: 0,
    partial: false,
  };
  const coverage = summary.coverage;
  if (coverage?.sampled && view.plan.mode === 'redrive') {
    const unseen = Math.max(0, coverage.depthAtStart - coverage.inventoried);
    out.push(
      `the inventory is a sample (${coverage.inventoried} of about ${coverage.depthAtStart} messages): the bulk move will be refused, since a move task would carry about ${unseen} messages that have no envelope; this approval covers parking and the verified sample`,
    );
  }
  const deadline = summary.earliestRetentionDeadline ?? view.preflight.earliestRetentionDeadline;
  for (const w of summaryWarningsBeside(
    view.preflight.warnings,
    { ...summary, earliestRetentionDeadline: deadline },
    { nowMs: view.nowMs, discardPoison: view.plan.discardPoison, fifo: view.preflight.fifo },
  ))
    if (!out.includes(w)) out.push(w);
  return out;
}

function summaryText(view: ApprovalRequestView): string {
  const s = view.summary;
  const queue = queueNameOf(view.dlqArn);
  const sources = view.preflight.sourceArns.map(queueNameOf);
  if (!s) {
    return (
      `*${plural(view.preflight.dlqDepth, 'message')}* (approximate) in \`${queue}\`` +
      sourceList(sources) +
      `\nNo triage summary for incident \`${escapeMrkdwn(view.incidentId)}\` (started by ${escapeMrkdwn(view.plan.requestedBy)}).`
    );
  }
  const sampled = s.coverage?.sampled === true;
  const lines = [
    `*${plural(s.messageCount, 'message')}* in \`${queue}\`` +
      sourceList(sources) +
      (s.partial && !sampled ? ' (inventory still partial)' : ''),
  ];
  if (s.coverage?.sampled)
    lines.push(
      `:warning: *Sample* of ${plural(s.coverage.inventoried, 'message')} out of about ${s.coverage.depthAtStart}: ${escapeMrkdwn(s.coverage.drawn ?? 'the messages the inventory could hold')}`,
    );
  const sentAt = s.oldestSentAt ?? (s.oldestMessageAgeMs === null ? null : view.nowMs - s.oldestMessageAgeMs);
  if (sentAt !== null && s.oldestMessageAgeMs !== null)
    lines.push(`Oldest message: sent ${clockText(sentAt, view.nowMs)}`);
  const deadline = s.earliestRetentionDeadline;
  if (deadline !== null) {
    const left = deadline - view.nowMs;
    lines.push(
      `Earliest retention deadline: ${iso(deadline)} (${left < DAY_MS ? ':warning: < 24 h, ' : ''}in ${formatDuration(left)}` +
        `${view.preflight.fifo ? ', approximate for FIFO' : ''})`,
    );
  }
  const classes = (Object.entries(s.countByClassification) as [Classification, number][])
    .filter(([, n]) => n > 0)
    .map(([c, n]) => `${c} ${n}`);
  if (classes.length > 0) lines.push(`Classification: ${classes.join(' · ')}`);
  return lines.join('\n');
}

function causesText(view: ApprovalRequestView): string | null {
  const causes = [...(view.summary?.causes ?? [])].sort((a, b) => b.count - a.count).slice(0, MAX_CAUSES);
  if (causes.length === 0) return null;
  const lines = causes.map(
    (c) =>
      `• *${c.count}* × \`${escapeMrkdwn(truncate(c.errorClass, MAX_ERROR_CLASS_CHARS))}\` (${c.classification}): e.g. \`${c.exampleMessageId}\`: ` +
      escapeMrkdwn(truncate(c.exampleReason, MAX_REASON_CHARS)),
  );
  const more = (view.summary?.causes.length ?? 0) - causes.length;
  if (more > 0) lines.push(`…and ${plural(more, 'more cause')}`);
  return `*Top causes*\n${lines.join('\n')}`;
}

function planText(view: ApprovalRequestView): string {
  const p = view.plan;
  const destination = p.destinationArn
    ? `every message to \`${queueNameOf(p.destinationArn)}\``
    : 'each message back to its own source queue';
  const lines = [
    `*Plan* (${p.mode}): ${destination}`,
    `Sample first: ${plural(p.sampleSize, 'message')}, verified before the ramp`,
  ];
  if (p.mode === 'redrive') {
    lines.push(
      `Ramp: ${p.rampRates.map((r) => `${r}`).join(' → ')} msg/s, ${stepSecondsText(p.dwellSeconds, view.preflight.verifyWindowSeconds)} with a health gate`,
    );
  }
  return lines.join('\n');
}

/**
 * The approval request: summary, causes, plan, warnings, and Approve / Reject buttons whose
 * `value` is the opaque approval id.
 *
 * @see https://api.slack.com/reference/block-kit/block-elements#button
 */
export function approvalRequestMessage(view: ApprovalRequestView): SlackMessage {
  const queue = queueNameOf(view.dlqArn);
  const warnings = approvalWarnings(view);
  const blocks: KnownBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(`Redrive approval: ${queue}`, 150) } },
    { type: 'section', text: { type: 'mrkdwn', text: fitSection(summaryText(view)) } },
  ];
  const causes = causesText(view);
  if (causes) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: fitSection(causes) } });
  blocks.push({ type: 'section', text: { type: 'mrkdwn', text: fitSection(planText(view)) } });
  if (warnings.length > 0) {
    blocks.push({
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: fitSection(`*Warnings*\n${warnings.map((w) => `:warning: ${escapeMrkdwn(w)}`).join('\n')}`),
      },
    });
  }
  blocks.push(approvalActions(view.approvalId), {
    type: 'context',
    elements: [
      {
        type: 'mrkdwn',
        text: `Incident \`${escapeMrkdwn(view.incidentId)}\` · requested by ${escapeMrkdwn(view.plan.requestedBy)} · expires ${iso(view.expiresAtMs)}`,
      },
    ],
  });
  const text =
    `Redrive approval for ${queue}: ${plural(view.summary?.messageCount ?? view.preflight.dlqDepth, 'message')}` +
    (warnings.length > 0 ? ` (${plural(warnings.length, 'warning')})` : '');
  return { text, blocks };
}

/** The Approve / Reject buttons of an approval request (`value` = the opaque approval id). */
function approvalActions(approvalId: string): KnownBlock {
  return {
    type: 'actions',
    block_id: APPROVAL_BLOCK_ID,
    elements: [
      {
        type: 'button',
        action_id: APPROVE_ACTION_ID,
        style: 'primary',
        text: { type: 'plain_text', text: 'Approve' },
        value: approvalId,
      },
      {
        type: 'button',
        action_id: REJECT_ACTION_ID,
        style: 'danger',
        text: { type: 'plain_text', text: 'Reject' },
        value: approvalId,
      },
    ],
  };
}

/** What {@link alarmClearedApprovalMessage} shows. */
export interface AlarmClearedApprovalView {
  approvalId: string;
  incidentId: string;
  dlqArn: string;
  /** When the alarm went back to OK, ISO-8601. */
  clearedAt: string;
  /**
   * The request as posted (from the approval record, see {@link parseStoredRequestMessage}), or
   * null for a record written before the message was stored.
   */
  original?: SlackMessage | null;
  /** When the request was posted, epoch milliseconds (said in the note when `original` is shown). */
  postedAtMs?: number | null;
}

/** The most a stored request message may take, UTF-8 bytes (DynamoDB items hold 400 KB). */
export const MAX_STORED_REQUEST_BYTES = 100_000;
/** Slack shows at most 50 blocks per message. */
export const MAX_BLOCKS = 50;

/**
 * The approval request as stored in the approval record: `{ text, blocks }` JSON, or null (not
 * stored) when it would pass {@link MAX_STORED_REQUEST_BYTES}. Block Kit limits keep a request
 * far below that: measured 7,784 bytes for the largest request the limits test builds
 * (60 source queues, 40 warnings); at most 7 blocks of which 5 sections cut to 3,000 characters.
 */
export function storedRequestMessage(message: SlackMessage): string | null {
  const json = JSON.stringify({ text: message.text, blocks: message.blocks ?? [] });
  return Buffer.byteLength(json, 'utf8') <= MAX_STORED_REQUEST_BYTES ? json : null;
}

const StoredRequestMessage = z.object({
  text: z.string(),
  blocks: z.array(z.looseObject({ type: z.string() })).check(z.minLength(1), z.maxLength(MAX_BLOCKS)),
});

/**
 * Reads a message written by {@link storedRequestMessage}.
 * @returns null when nothing is stored or the value is not such a message (the caller falls back).
 */
export function parseStoredRequestMessage(stored: unknown): SlackMessage | null {
  if (typeof stored !== 'string' || stored.length === 0) return null;
  try {
    const parsed = StoredRequestMessage.safeParse(JSON.parse(stored));
    return parsed.success ? { text: parsed.data.text, blocks: parsed.data.blocks as KnownBlock[] } : null;
  } catch {
    return null;
  }
}

function isApprovalActions(block: KnownBlock): boolean {
  return block.type === 'actions' && block.block_id === APPROVAL_BLOCK_ID;
}

/**
 * The approval request once its alarm went back to OK while it was still pending. The
 * request stays open: the same Approve / Reject buttons (same approval id, rebuilt from `view`,
 * not from the stored blocks), a header saying "alarm cleared", and a note that an approved run
 * re-reads the DLQ depth first (`CheckDlqStillHasMessages`) and ends with "nothing to redrive"
 * when the DLQ is empty.
 *
 * With `original` (the stored request) every block of the request is kept (summary, causes,
 * plan, warnings, footer) and the note goes in a context block just above the buttons; `chat.update`
 * replaces the whole message, so this is how the approver keeps what they are asked to approve.
 * Without it (records written before the request was stored) the message is the header, the
 * note and the buttons. At most {@link MAX_BLOCKS} blocks, every text within 3,000 characters.
 *
 * @see https://api.slack.com/methods/chat.update
 * @see https://api.slack.com/reference/block-kit/blocks#context
 */
export function alarmClearedApprovalMessage(view: AlarmClearedApprovalView): SlackMessage {
  const queue = queueNameOf(view.dlqArn);
  const note = `alarm cleared at ${view.clearedAt}: the alarm is back to OK. This approval stays open; if approved, the workflow re-reads the DLQ depth (ApproximateNumberOfMessages) before any redrive and ends with "nothing to redrive" when the DLQ is empty.`;
  const header: KnownBlock = {
    type: 'header',
    text: { type: 'plain_text', text: truncate(`Redrive approval: ${queue} (alarm cleared)`, 150) },
  };
  const original = view.original;
  if (original?.blocks && original.blocks.length + 1 <= MAX_BLOCKS) {
    const posted =
      typeof view.postedAtMs === 'number'
        ? ` The summary and plan above are as posted at ${iso(view.postedAtMs)}.`
        : '';
    const noteBlock: KnownBlock = {
      type: 'context',
      elements: [{ type: 'mrkdwn', text: fitSection(`:information_source: ${escapeMrkdwn(note + posted)}`) }],
    };
    const blocks: KnownBlock[] = [];
    let placed = false;
    for (const block of original.blocks) {
      if (block.type === 'header') blocks.push(header);
      else if (isApprovalActions(block) && !placed) {
        blocks.push(noteBlock, approvalActions(view.approvalId));
        placed = true;
      } else if (!isApprovalActions(block)) blocks.push(block);
    }
    if (!placed) blocks.push(noteBlock, approvalActions(view.approvalId));
    return { text: truncate(`${original.text}. ${note}`, MAX_SECTION_CHARS), blocks };
  }
  return {
    text: `Redrive approval for ${queue}: ${note}`,
    blocks: [
      header,
      {
        type: 'section',
        text: { type: 'mrkdwn', text: fitSection(`:information_source: ${escapeMrkdwn(note)}`) },
      },
      approvalActions(view.approvalId),
      {
        type: 'context',
        elements: [{ type: 'mrkdwn', text: `Incident \`${escapeMrkdwn(view.incidentId)}\`` }],
      },
    ],
  };
}

function single(text: string): SlackMessage {
  return {
    text,
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: fitSection(escapeMrkdwn(text)) } }],
  };
}

/** The request message once decided: "Approved by <username>" / "Rejected by <username>". */
export function decidedMessage(
  decision: 'approved' | 'rejected',
  username: string,
  atMs: number,
): SlackMessage {
  const verb = decision === 'approved' ? 'Approved' : 'Rejected';
  const next =
    decision === 'approved'
      ? ' The sample redrive starts now; progress follows in this thread.'
      : ' Nothing was moved.';
  return single(`${verb} by ${username} at ${iso(atMs)}.${next}`);
}

/** Shown when a decision was already taken (retry, double click, second approver). */
export function alreadyDecidedMessage(decision: 'approved' | 'rejected', username: string): SlackMessage {
  return single(`Already ${decision} by ${username}.`);
}

/** Shown when Step Functions says the task is gone, or no record exists. */
export function expiredMessage(): SlackMessage {
  return single(EXPIRED_TEXT);
}

/** The approval request once its state timed out: no buttons left. */
export function approvalExpiredMessage(): SlackMessage {
  return single('Approval expired: nobody answered in time. Nothing was moved.');
}

/** The ephemeral reply to a user who may not approve. */
export function notApproverMessage(): SlackMessage {
  return single(NOT_APPROVER_TEXT);
}

/**
 * The retention reminder (approval-reminders.ts): the approval still waits and the DLQ's first
 * message expires soon. Mentions the approvers, so Slack notifies them.
 * @param view.deadline - epoch ms; @param view.nowMs - epoch ms.
 */
export function retentionReminderMessage(view: {
  deadline: number;
  nowMs: number;
  approvers: readonly string[];
}): SlackMessage {
  const left = view.deadline - view.nowMs;
  const when = left > 0 ? `in ${formatDuration(left)}` : `${formatDuration(-left)} ago`;
  const who = view.approvers.length > 0 ? ` ${view.approvers.map((id) => `<@${id}>`).join(' ')}` : '';
  const text = `:hourglass: Still waiting for approval, and the DLQ's first message expires ${iso(view.deadline)} (${when}): SQS deletes it then.${who}`;
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: fitSection(text) } }] };
}

/** A progress / report notice in the incident's thread. */
export function threadNotice(kind: string, text: string, fields: Record<string, unknown> = {}): SlackMessage {
  const entries = Object.entries(fields).filter(([, v]) => v !== undefined && v !== null);
  const blocks: KnownBlock[] = [
    {
      type: 'section',
      text: { type: 'mrkdwn', text: fitSection(`*${escapeMrkdwn(kind)}*: ${escapeMrkdwn(text)}`) },
    },
  ];
  if (entries.length > 0) {
    blocks.push({
      type: 'section',
      fields: entries.slice(0, 10).map(([k, v]) => ({
        type: 'mrkdwn' as const,
        text: `*${escapeMrkdwn(k)}*\n${escapeMrkdwn(truncate(typeof v === 'string' ? v : JSON.stringify(v), 200))}`,
      })),
    });
  }
  return { text: `${kind}: ${text}`, blocks };
}

/**
 * `message` with the notices that went to the log instead of Slack added at the end, one
 * line each with its UTC time, so the thread says what it missed.
 */
export function withMissedNotices(
  message: SlackMessage,
  missed: readonly { kind: string; text: string; at: number }[],
): SlackMessage {
  if (missed.length === 0) return message;
  const lines = missed.map(
    (m) => `${new Date(m.at).toISOString().replace(/\.\d{3}Z$/, 'Z')} ${m.kind}: ${m.text}`,
  );
  const heading = `${missed.length} earlier notice(s) could not be posted while Slack was rate-limiting or unreachable (they went to the log):`;
  return {
    text: `${message.text}\n${heading}\n${lines.join('\n')}`,
    blocks: [
      ...(message.blocks ?? []),
      {
        type: 'context',
        elements: [{ type: 'mrkdwn', text: fitSection(escapeMrkdwn(`${heading}\n${lines.join('\n')}`)) }],
      },
    ],
  };
}
