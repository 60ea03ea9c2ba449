/**
 * The one place typed decisions become sentences: ramp reasons and exposure bounds (reasons.ts)
 * for the ramp's `reason`, Notify, Slack, the CLI and `npm start`. Tests assert the codes and
 * numbers, not these sentences.
 */
import type { ExposureBasis, ForeignTask, RampReason } from './reasons.js';

const shortName = (arn: string) => arn.split(':').pop() ?? arn;
const iso = (ms: number) => new Date(ms).toISOString();
const sources = (bySource: Record<string, number>) =>
  Object.entries(bySource)
    .map(([arn, n]) => `${shortName(arn)}: ${n}`)
    .join(', ');
const leftText = (left: Record<string, number>) =>
  Object.entries(left)
    .filter(([, n]) => n > 0)
    .map(([why, n]) => `${n} ${why}`)
    .join(', ');
const seconds = (s: number) => `${Math.round(s * 10) / 10} s`;

/** The sentence that names a move task the pipeline did not start. */
export function foreignTaskText(task: ForeignTask): string {
  const started = task.startedAt !== null ? iso(task.startedAt) : 'an unknown time';
  return `redrive refused: move task ${task.taskHandle ?? `(${task.status.toLowerCase()})`} on this DLQ was not started by this run (${task.rate ?? '?'} msg/s, started ${started}, ${task.moved} moved); the pipeline leaves it alone: let it finish or cancel it, then start the redrive again`;
}

const ADOPTED = {
  started: '',
  record: ' (its recorded handle, adopted by a retry)',
  'crashed-attempt': ' (started by an earlier attempt that crashed before recording it)',
  'lost-answer': ' (accepted by a first call whose answer was lost)',
} as const;

/** The accounting that called for an inventory, as the clause a halt or a park begins with. */
const after = (r: RampReason | null) => (r ? rampReasonText(r) : 'the DLQ held more than the plan expects');

/** A ramp reason as the sentence a person reads. */
export function rampReasonText(r: RampReason): string {
  switch (r.code) {
    case 'task-started':
      return `move task ${r.taskHandle} started at ${r.rate} msg/s${ADOPTED[r.by]}`;
    case 'excess':
      return `the DLQ holds ${r.depth} message(s), ${r.excess} more than the ${r.expected} the plan has left to move`;
    case 'excess-at-start':
      return `the DLQ holds ${r.depth} message(s) but only ${r.inDlq} envelope(s) are IN_DLQ`;
    case 'excess-after-window':
      return `after the return window the DLQ holds ${r.depth} message(s), ${r.excess} more than expected`;
    case 'examine-pending':
      return `${rampReasonText({ ...r, code: 'excess' })}: the task is cancelled; the DLQ is inventoried once it has stopped (${r.status})`;
    case 'reinflow':
      return r.baseline === null
        ? `re-inflow: ${r.returned} message(s) this run sent came back to the DLQ (${sources(r.bySource)}): the consumer fails them again; stopped after ${r.moved} moved, up to ${r.atRisk} moved since the last clean step may still come back; the rest stays in the DLQ`
        : `re-inflow: ${r.returned} message(s) this run redriven came back to the DLQ (${sources(r.bySource)}): the consumer fails them again; ${after(r.after)}. The move task is stopped after ${r.moved} of ${r.baseline} moved; up to ${r.atRisk} moved since the last clean check may still come back; the rest stays in the DLQ`;
    case 'inventory-partial':
      return `${after(r.after)}, and ${r.detail}: re-inflow cannot be told from late arrivals, so the ramp stops; ${r.moved} moved`;
    case 'payload-unchecked':
      return `${after(r.after)}, and ${r.detail}: the ramp stops; ${r.moved} moved`;
    case 'late-to-park':
      return `${after(r.after)}: ${r.late} late arrival(s) inventoried, ${r.toPark} of them must not be redriven: parking them before the ramp goes on at ${r.rate} msg/s`;
    case 'late-none-to-park':
      return `${after(r.after)}: ${r.late} late arrival(s) inventoried, none to park; ${rampReasonText(r.next)}`;
    case 'leftover':
      return `${r.depth} message(s) were not moved (held by another receiver when the task started): ${rampReasonText(r.next)}`;
    case 'backlog':
      return `source backlog ${r.backlog} exceeds ${r.limit} (rate x dwell x ${r.factor}): holding at ${r.rate} msg/s`;
    case 'healthy':
      return `healthy at ${r.rate} msg/s (${r.moved} moved, the DLQ holds what the plan expects): stepping up to ${r.nextRate} msg/s`;
    case 'healthy-top':
      return `healthy at the top rate ${r.rate} msg/s: ${r.moved} of ${r.baseline} moved`;
    case 'drain-wait':
      return `${r.moved} message(s) moved; holding ${r.secondsLeft} s more so the last of them have their return window (${r.returnWindowSeconds} s) before the ramp is complete`;
    case 'done':
      return `move task(s) moved ${r.moved} message(s); none came back within the return window (${r.returnWindowSeconds} s)${r.left > 0 ? `; ${r.left} left in the DLQ` : ''}`;
    case 'empty-at-start':
      return 'the DLQ is empty after park and sample: nothing to move';
    case 'empty-task-stopping':
      return 'the DLQ is empty; waiting for the idle task to stop';
    case 'check-bound':
      return `the ramp reached its bound of ${r.maxChecks} gate checks (Step Functions ends an execution at 25,000 history events): the move task is stopped after ${r.moved} moved; the rest stays in the DLQ`;
    case 'step-bound':
      return `${r.maxSteps} mover steps, the most 25,000 history events hold; ${r.moved} moved, the rest stays in the DLQ: start the redrive again`;
    case 'foreign-task':
      return foreignTaskText(r);
    case 'ambiguous-tasks':
      return `redrive refused: ${r.count} move tasks started after this run asked for one at ${r.rate} msg/s: which is its own cannot be told; cancel them and start again`;
    case 'rate-refused':
      return `redrive refused: ${r.detail}`;
    case 'start-refused':
      return r.detail;
    case 'task-failed':
      return `move task FAILED (${r.failureReason ?? 'no reason given'}) after moving ${r.moved} of ${r.toMove ?? '?'} message(s); the rest stays in the DLQ`;
    case 'task-cancelled-outside':
      return `move task was cancelled outside the workflow after moving ${r.moved} message(s)`;
    case 'task-status':
      return `move task status ${r.status}: waiting`;
    case 'task-not-listed-yet':
      return `move task ${r.taskHandle} is not listed yet`;
    case 'task-not-listed':
      return `move task ${r.taskHandle} of this run is not listed for this DLQ`;
    case 'no-task':
      return 'no move task of this run to supervise';
    case 'cancelled-task-stopping':
      return `waiting for the cancelled task (${r.status})`;
    case 'step-up-waits':
      return `step-up to ${r.rate} msg/s waits for the cancelled task (${r.status})`;
    case 'cancelled':
      return `cancelled by ${r.by} (${r.via}) at ${iso(r.at)}${r.note ? `: ${r.note}` : ''}; ${r.moved} message(s) moved before the cancel${r.restInDlq ? ', the rest stays in the DLQ' : ''}`;
    case 'stopped-after-failure':
      return r.taskHandle === null
        ? 'a ramp step failed; no move task of this run was running'
        : `a ramp step failed: its move task ${r.taskHandle} was ${r.cancelled ? 'cancelled' : 'no longer running'} after ${r.moved} message(s) moved${r.stillStatus ? ` and had not stopped within ${r.waitSeconds} s (${r.stillStatus})` : ''}`;
    case 'send-failed':
      return `the target refused ${r.count} message(s) (${r.examples.join('; ')}): they stay in the DLQ; ${r.moved} moved`;
    case 'in-flight':
      return `${r.inFlight} message(s) of ${r.queue} are in flight (an unfinished invocation or another reader): waiting ${r.waitSeconds} s, their visibility timeout; ${r.moved} moved so far`;
    case 'mover-drain-wait':
      return `${r.moved} message(s) moved; holding ${r.secondsLeft} s: the last of them need their return window (${r.returnWindowSeconds} s)`;
    case 'mover-draining':
      return `draining: ${r.secondsLeft} s left of the return window`;
    case 'mover-done':
      return moverDoneText(r);
    case 'mover-moved': {
      const left = leftText(r.left);
      return `${r.movedNow} moved at ${r.rate} msg/s (${r.moved} of ${r.selected} selected)${r.nextRate !== null ? `; no re-inflow for a dwell and a return window: next ${r.nextRate} msg/s` : ''}${left ? `; left in the DLQ: ${left}` : ''}`;
    }
  }
}

/** Held FIFO groups named in the mover's summary. */
const HELD_GROUP_EXAMPLES = 5;

function moverDoneText(r: Extract<RampReason, { code: 'mover-done' }>): string {
  const leftN = Object.values(r.left).reduce((n, v) => n + v, 0);
  const left = leftText(r.left);
  const held = r.heldGroups?.groups
    ? `; FIFO: ${r.heldGroups.groups} message group(s) held in the DLQ from their first message that may not be moved, in order (${r.heldGroups.examples.join('; ')}${r.heldGroups.groups > HELD_GROUP_EXAMPLES ? '; ...' : ''})`
    : '';
  return `the recording mover moved ${r.moved} message(s) of ${r.moved + leftN} selected; none came back within the return window (${r.returnWindowSeconds} s)${left ? `; left in the DLQ: ${left}` : ''}; ${r.moved} moved + ${leftN} left + ${r.fifoHeld} FIFO-held + ${r.notSelected} not selected = ${r.moved + leftN + r.fifoHeld + r.notSelected} seen${held}`;
}

/**
 * An exposure bound's basis: each rate in force over the window, and where the window starts, e.g.
 * `25 moved (of 5 msg/s x 6 s) + 25 msg/s x 5 s: the rates in force from one return window (5 s) before the last
 * clean check to the last check`.
 */
export function exposureBasisText(basis: ExposureBasis): string {
  if (basis.terms.length === 0) return 'nothing moved in the window a broken consumer could be fed from';
  const terms = basis.terms
    .map((t) =>
      t.messages < Math.ceil(t.rate * t.seconds - 1e-9)
        ? `${t.messages} moved (of ${t.rate} msg/s x ${seconds(t.seconds)})`
        : `${t.rate} msg/s x ${seconds(t.seconds)}`,
    )
    .join(' + ');
  const since =
    basis.cleanAt === null
      ? "the ramp's start"
      : `one return window (${basis.returnWindowSeconds} s) before the last clean check`;
  return `${terms}: the rates in force from ${since} to the last check`;
}

/** `N messages (basis)`: an exposure bound in a line. */
export function exposureBoundText(bound: { bound: number; basis: ExposureBasis }): string {
  return `${bound.bound} message(s) at most: ${exposureBasisText(bound.basis)}`;
}
