/**
 * The ramp's progress message in the incident's Slack thread: one message per run, updated in
 * place (`chat.update`) at each health gate: every ramp step with its rate, what it moved and the
 * re-inflow it saw, the total moved, the gate's last sentence, and a **Cancel** button for
 * approvers (with a confirmation dialog) until the ramp ends or a cancel is requested.
 *
 * Bounded whatever the run does: at most `MAX_RAMP_STEPS` (10) step lines, every text cut to
 * Block Kit's limits (section 3,000 characters, context element 3,000, button value 2,000), at
 * most 6 blocks.
 *
 * @see https://api.slack.com/reference/block-kit/blocks
 * @see https://api.slack.com/reference/block-kit/composition-objects#confirm
 */

import type { KnownBlock } from '@slack/types';
import { clockText, isoUtc } from '#platform/clock-text.js';
import type { ExposureBasis } from '#platform/reasons.js';
import { exposureBoundText } from '#platform/reasons-text.js';
import type { SlackMessage } from './slack-client.js';
import { escapeMrkdwn, fitSection, queueNameOf } from './slack-messages.js';

/** `action_id` of the Cancel button on the progress message. */
export const CANCEL_ACTION_ID = 'cancel_redrive';
/** `block_id` of the progress message's actions block. */
export const PROGRESS_BLOCK_ID = 'redrive_progress';
/** Slack's limit on a button's `value`, characters. */
export const MAX_BUTTON_VALUE_CHARS = 2000;
/** The gate's sentence is cut to this many characters in the message. */
const MAX_REASON_CHARS = 500;

/** One ramp step as the progress message shows it. Times epoch milliseconds. */
export interface ProgressStep {
  /** Messages per second. */
  rate: number;
  /** Moved while this step ran (its move task's count). */
  moved: number;
  /** Messages of this run seen back in the DLQ at this step's last check. */
  reinflow: number;
  /** DLQ depth above what the plan expects at the step's last check (re-inflow or late arrivals). */
  excess: number;
  startedAt: number;
  updatedAt: number;
}

/** A cancel request as the message shows it. */
export interface ProgressCancel {
  by: string;
  via: string;
  /** Epoch milliseconds. */
  at: number;
}

/** Everything the progress message shows. */
export interface RampProgressView {
  incidentId: string;
  executionName: string;
  dlqArn: string;
  /** Ramp steps in the order they ran (a step-up appends one). */
  steps: ProgressStep[];
  /** How many steps the plan has. */
  plannedSteps: number;
  /** Moved by the whole ramp so far. */
  moved: number;
  /** Messages the ramp must move (the gate's baseline), when known. */
  toMove: number | null;
  /** The gate's decision (`hold`, `step-up`, `done`, `halt`, `cancelled`...). */
  decision: string;
  /** The gate's last sentence. */
  reason: string;
  /** The ramp's exposure bound so far, or null before the first gate. */
  exposure: { bound: number; basis: ExposureBasis } | null;
  /** True once the ramp ended (done, halt, refuse, cancelled): no Cancel button any more. */
  ended: boolean;
  cancel: ProgressCancel | null;
  /** The queue has Slack approvers: show the Cancel button (an empty list means nobody may). */
  canCancel: boolean;
  /** Now, epoch milliseconds. */
  nowMs: number;
}

/** The Cancel button's `value`: the run it stops (`<incidentId> <executionName>`; neither has spaces). */
export function cancelValue(incidentId: string, executionName: string): string {
  return `${incidentId} ${executionName}`;
}

/** The run a Cancel button's `value` names, or null when it is not one. */
export function parseCancelValue(value: string): { incidentId: string; executionName: string } | null {
  const match = /^([\x21-\x7E]{1,128}) ([A-Za-z0-9_-]{1,80})$/.exec(value);
  return match ? { incidentId: match[1] as string, executionName: match[2] as string } : null;
}

function stepLine(step: ProgressStep, index: number, view: RampProgressView): string {
  const current = index === view.steps.length - 1 && !view.ended;
  const back =
    step.reinflow > 0 || step.excess > 0
      ? `:warning: re-inflow ${step.reinflow}${step.excess > step.reinflow ? ` (DLQ ${step.excess} above plan)` : ''}`
      : 're-inflow 0';
  return `${current ? '▶' : '•'} step ${index + 1}/${view.plannedSteps}: *${step.rate} msg/s* · moved ${step.moved} · ${back} · since ${isoUtc(step.startedAt)}`;
}

function headline(view: RampProgressView): string {
  const of = view.toMove !== null && view.toMove > 0 ? ` of ${view.toMove}` : '';
  const state = view.ended ? `ramp ended: *${escapeMrkdwn(view.decision)}*` : 'ramp running';
  return `*Redrive progress* · \`${escapeMrkdwn(queueNameOf(view.dlqArn))}\` · ${state} · moved *${view.moved}*${of}`;
}

/**
 * The progress message. Pure.
 *
 * @returns `{ text, blocks }` within Block Kit's limits (see the module comment).
 */
export function rampProgressMessage(view: RampProgressView): SlackMessage {
  const reason =
    view.reason.length > MAX_REASON_CHARS ? `${view.reason.slice(0, MAX_REASON_CHARS - 1)}…` : view.reason;
  const blocks: KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: fitSection(headline(view)) } },
  ];
  if (view.steps.length > 0)
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: fitSection(view.steps.map((s, i) => stepLine(s, i, view)).join('\n')) },
    });
  blocks.push({
    type: 'context',
    elements: [
      {
        type: 'mrkdwn',
        text: fitSection(
          `updated ${clockText(view.nowMs, view.nowMs)} · execution ${escapeMrkdwn(view.executionName)}${view.exposure ? ` · exposure bound ${escapeMrkdwn(exposureBoundText(view.exposure))}` : ''}${reason ? ` · ${escapeMrkdwn(reason)}` : ''}`,
        ),
      },
    ],
  });
  if (view.cancel)
    blocks.push({
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: fitSection(
            `:octagonal_sign: Cancel requested by ${escapeMrkdwn(view.cancel.by)} (${escapeMrkdwn(view.cancel.via)}) at ${isoUtc(view.cancel.at)}${view.ended ? '' : ': the ramp stops at its next health check, then reconciles'}.`,
          ),
        },
      ],
    });
  else if (!view.ended && view.canCancel)
    blocks.push({
      type: 'actions',
      block_id: PROGRESS_BLOCK_ID,
      elements: [
        {
          type: 'button',
          action_id: CANCEL_ACTION_ID,
          style: 'danger',
          text: { type: 'plain_text', text: 'Cancel redrive' },
          value: cancelValue(view.incidentId, view.executionName),
          confirm: {
            title: { type: 'plain_text', text: 'Cancel this redrive?' },
            text: {
              type: 'mrkdwn',
              text: 'The move task is cancelled at the next health check; what it moved stays moved, the rest stays in the DLQ, and the run reconciles.',
            },
            confirm: { type: 'plain_text', text: 'Cancel redrive' },
            deny: { type: 'plain_text', text: 'Keep running' },
          },
        },
      ],
    });
  const text = `Redrive progress ${queueNameOf(view.dlqArn)}: ${view.ended ? `ended ${view.decision}` : 'running'}, moved ${view.moved}${view.toMove ? ` of ${view.toMove}` : ''}`;
  return { text: text.slice(0, 3000), blocks };
}

/** The ephemeral reply when a Cancel was already requested (first request wins). */
export function alreadyCancelledMessage(cancel: ProgressCancel): SlackMessage {
  const text = `Cancel already requested by ${cancel.by} (${cancel.via}) at ${isoUtc(cancel.at)}.`;
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: escapeMrkdwn(text) } }] };
}

/** The ephemeral reply when the run's ramp has ended (or never reported): nothing to cancel. */
export function notRunningMessage(): SlackMessage {
  const text = 'This redrive is no longer running: nothing to cancel.';
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] };
}
