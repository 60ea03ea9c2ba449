/**
 * Preflight for the recording mover (docs/contracts.md, "The recording mover", "Which path"): which
 * path a plan takes, how many messages its selection takes ("N of M", by cause), and the checks of
 * a mover run, each a refusal by name before any side effect.
 *
 * A plan takes the mover when it has a selection, un-parks, has a transform, or when messages of
 * the DLQ have a non-SQS origin (SNS subscription, EventBridge target, Lambda async invocation),
 * or a destination in another account or Region: a move task can do none of these.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
 */
import type { ExecutionPlan, Selection } from '#incident/execution-plan.js';
import type { StoredEnvelope } from '#inventory/envelope-store.js';
import type { InventoryCoverageRead } from '#inventory/inventory-session.js';
import type { QueueRegistration } from '#inventory/model.js';
import { accessTo, parseArn, targetRefOf } from '#transfer/mover-targets.js';
import {
  matchesSelection,
  needsPayload,
  notRedrivable,
  payloadOf,
  type SelectableEnvelope,
} from '#transfer/selection.js';

/** Which engine moves the messages. */
export type TransferPath = 'move-task' | 'mover';

/** `$.preflight.selection`: what the plan takes, of the messages it looks at. */
export interface SelectionCount {
  selected: number;
  total: number;
  /** Selected messages by cause fingerprint. */
  byCause: Record<string, number>;
}

/** Default return window of a message sent to a non-SQS origin without a registered one, seconds. */
export const DEFAULT_ORIGIN_RETURN_WINDOW_SECONDS = 60;

/** The selection without its body conditions. */
function withoutBodyConditions(selection: Selection): Selection {
  const { body: _body, ...rest } = selection;
  return rest as Selection;
}

/**
 * What a FIFO DLQ holds that a move task cannot take in group order (docs/redrive-workflow.md,
 * "Deep FIFO groups"): do-not-redrive messages (Park taking one out of its group would let the rest
 * of the group overtake it; a move task cannot skip it) and messages without an envelope (behind
 * their group's first messages, where a scan cannot see, or arrived since triage).
 */
export interface FifoHolds {
  /** Envelopes IN_DLQ that must not be redriven (poison, permanent, over maxRedrives, ...). */
  doNotRedrive: number;
  /** DLQ depth minus the envelopes IN_DLQ: messages no inventory has seen yet. */
  unseen: number;
}

/**
 * Why a plan needs the mover (empty: the move task can do it). An inventory that is a sample (the
 * DLQ was deeper than it could hold, docs/contracts.md "Messages triage could not see") needs it:
 * a move task would move the messages it did not see, without an envelope.
 */
export function moverReasons(
  plan: ExecutionPlan,
  nonSqsOrigins: number,
  fifo?: FifoHolds,
  inventory?: InventoryCoverageRead,
): string[] {
  const reasons: string[] = [];
  if (inventory?.sampled)
    reasons.push(
      `an inventory that is a sample (${inventory.inventoried} of ${inventory.depthAtStart} seen; each unseen message is recorded before it moves)`,
    );
  if (plan.selection) reasons.push('a selection');
  if (plan.unpark) reasons.push('un-park');
  if (plan.transform) reasons.push('a transform');
  if (plan.destinationArn && outsideDlqScope(plan.destinationArn, plan.dlqArn))
    reasons.push('a destination in another account or Region');
  if (nonSqsOrigins > 0) reasons.push(`${nonSqsOrigins} message(s) of a non-SQS origin`);
  if (fifo && fifo.doNotRedrive > 0)
    reasons.push(`FIFO: ${fifo.doNotRedrive} do-not-redrive message(s) hold their message groups`);
  if (fifo && fifo.unseen > 0)
    reasons.push(
      `FIFO: ${fifo.unseen} message(s) not inventoried yet, taken in group order as the mover reaches them`,
    );
  return reasons;
}

/** True when `arn` is in another account or Region than the DLQ (a move task cannot reach it). */
export function outsideDlqScope(arn: string, dlqArn: string): boolean {
  const target = parseArn(arn);
  const dlq = parseArn(dlqArn);
  return !!target && !!dlq && (target.accountId !== dlq.accountId || target.region !== dlq.region);
}

/** What {@link SelectionCounter} reads of an envelope (`inlineBody` only for a selection with body conditions). */
export type CountedEnvelope = SelectableEnvelope &
  Pick<StoredEnvelope, 'state' | 'inlineBody' | 'origin' | 'sourceArn' | 'payload' | 'payloadGoneAt'>;

/**
 * Counts what the plan selects, one envelope at a time (the envelopes the run looks at: IN_DLQ,
 * or PARKED when un-parking), and collects the targets of the selected ones and why some have none.
 */
export class SelectionCounter {
  public readonly count: SelectionCount = { selected: 0, total: 0, byCause: {} };
  /** Target ARN -> selected messages going there. */
  public readonly targets = new Map<string, number>();
  /** Why selected messages have no target, counted. */
  public readonly noTarget = new Map<string, number>();

  public constructor(private readonly plan: ExecutionPlan) {}

  /** True when this envelope is one the run looks at. */
  public looksAt(envelope: Pick<StoredEnvelope, 'state'>): boolean {
    return envelope.state === (this.plan.unpark ? 'PARKED' : 'IN_DLQ');
  }

  public add(envelope: CountedEnvelope): void {
    if (!this.looksAt(envelope)) return;
    this.count.total += 1;
    // A body condition needs the body: a chunked one is not read here and counts as selected
    // (the mover decides on the message itself).
    const body = envelope.inlineBody ? Buffer.from(envelope.inlineBody).toString('utf8') : undefined;
    const payload = needsPayload(this.plan.selection) && body !== undefined ? payloadOf(body) : undefined;
    const bodyUnread = needsPayload(this.plan.selection) && body === undefined;
    const selection =
      bodyUnread && this.plan.selection ? withoutBodyConditions(this.plan.selection) : this.plan.selection;
    if (!matchesSelection(envelope, selection, payload) || notRedrivable(envelope, this.plan)) return;
    this.count.selected += 1;
    const cause = envelope.failure.fingerprint;
    this.count.byCause[cause] = (this.count.byCause[cause] ?? 0) + 1;
    const ref = targetRefOf(envelope, this.plan);
    if (ref.kind === null) this.noTarget.set(ref.reason, (this.noTarget.get(ref.reason) ?? 0) + 1);
    else this.targets.set(ref.arn, (this.targets.get(ref.arn) ?? 0) + 1);
  }
}

/**
 * The refusals of a mover run, by name: nothing selected, targets that cannot be reached from
 * here (another account or Region without a registered role), selected messages without a
 * target, un-park without a parking queue.
 */
export function moverRefusals(
  plan: ExecutionPlan,
  counter: SelectionCounter,
  registration: Pick<QueueRegistration, 'accessRoles'>,
): string[] {
  const refusals: string[] = [];
  if (plan.unpark && !plan.parkingQueueUrl)
    refusals.push('unpark: the plan names no parking queue to un-park from');
  const { selected, total } = counter.count;
  if (selected === 0)
    refusals.push(
      plan.unpark
        ? `unpark: none of the ${total} parked message(s) of this DLQ is selected`
        : `selection: selects none of the ${total} message(s) in the DLQ (poison and permanent ones move only when a cause or classification names them)`,
    );
  for (const arn of counter.targets.keys()) {
    const access = accessTo(arn, plan.dlqArn, registration.accessRoles);
    if (!access.ok) refusals.push(access.refusal);
  }
  for (const [reason, n] of counter.noTarget)
    refusals.push(`${n} selected message(s) have no target: ${reason}`);
  return refusals;
}
