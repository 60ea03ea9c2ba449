/**
 * Messages in the DLQ that the pipeline has no envelope for: the DLQ alarm fires once, on 0 -> 1,
 * so whatever dead-letters after triage's inventory (during the approval, the sample, the ramp)
 * produces no new alarm transition and no triage. When the accounting says the DLQ
 * holds more than the plan expects, {@link inventoryNewcomers} inventories the DLQ again (the
 * triage inventory, marking what it creates `lateArrival`), so every newcomer gets an envelope and
 * a classification, and sorts the newcomers:
 *
 * - **returned** (re-inflow): the newcomer's idempotency key belongs to a message of this run that
 *   has left the DLQ (a sample, or a message a move task moved): the consumer failed it again;
 * - **late**: anything else (a message that dead-lettered after triage for the first time, or a
 *   second copy of a key still in the DLQ); `toPark` of them must leave before a bulk move
 *   (poison, permanent, over maxRedrives: Park takes them out).
 *
 * The inventory holds every message it receives until it has seen the DLQ; an inventory that
 * stops early (budget, time, FIFO groups) cannot tell the two apart and says so (`partial`).
 *
 * With a `payloads` port, the newcomers' extended-client pointers are HeadObjected like
 * Preflight's (check 3a): a gone object is marked on its envelope and its late arrival counts in
 * `toPark` (Park parks it), so a pointer that dead-letters during the sample or the ramp is not
 * moved unchecked; an unreadable bucket is `payloadRefusal`.
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html (alarm state changes)
 */
import type { EnvelopeStore } from '#inventory/envelope-store.js';
import { type InventoryDeps, inventoryDlq, inventoryRefusal } from '#inventory/inventory.js';
import type { Envelope, PayloadPointer, QueueRegistration } from '#inventory/model.js';
import { checkPayloadPointers, type PayloadObjects } from '#inventory/payload-objects.js';
import type { SqsQueues } from '#platform/sqs-queues.js';
import { parkReason } from './redrive-plan.js';

/** One newcomer, as the gate reports it (no body). */
export interface Newcomer {
  messageId: string;
  idempotencyKey: string;
  sourceArn: string;
  classification: Envelope['classification'];
  /** The extended-client pointer, if the body is one (the recheck HeadObjects it). */
  payload?: PayloadPointer;
}

/** What {@link inventoryNewcomers} found. */
export interface Newcomers {
  /** The inventory did not see the whole DLQ (or was refused): newcomers may be missing. */
  partial: boolean;
  /** Why it is partial (the inventory's stop reason or refusal), else null. */
  partialReason: string | null;
  /** Distinct messages the inventory saw in the DLQ. */
  present: number;
  /** Newcomers carrying the key of a message of this run that had left the DLQ: re-inflow. */
  returned: Newcomer[];
  /** The other newcomers (late arrivals), now inventoried and classified. */
  late: Newcomer[];
  /** Of `late`: how many Park must take out before a bulk move (gone extended-client payloads included). */
  toPark: number;
  /** Pointers of newcomers S3 would not answer for (HeadObject 403), else null: nothing may move. */
  payloadRefusal: string | null;
  /** What a person should see (gone payloads, named). */
  warnings: string[];
}

/** Ports of {@link inventoryNewcomers}. */
export interface NewcomerPorts {
  queues: SqsQueues;
  envelopes: EnvelopeStore;
  registrations: { getRegistration(dlqArn: string): Promise<QueueRegistration> };
  /** Lambda's `getRemainingTimeInMillis`. */
  remainingTimeMs: () => number;
  /** Epoch milliseconds. */
  now: () => number;
  /** HeadObject of extended-client payloads; without it pointers are not checked. */
  payloads?: PayloadObjects;
}

/** The plan fields the gate's inventory needs (a subset of `$.plan`). */
export interface NewcomerPlan {
  dlqArn: string;
  dlqUrl: string;
  incidentId: string;
  maxRedrives: number;
  destinationArn: string | null;
}

/** True when the envelope belongs to this run (triage's inventory for it, or a step of it). */
function ofRun(envelope: Envelope, plan: Pick<NewcomerPlan, 'incidentId'>): boolean {
  return (
    envelope.incidentId === plan.incidentId ||
    (envelope.stateReason?.includes(`(run ${plan.incidentId})`) ?? false)
  );
}

/**
 * Inventories the plan's DLQ and sorts the messages first seen now into returned and late.
 *
 * @throws TransientError on throttling/5xx (the held messages are released first).
 */
export async function inventoryNewcomers(plan: NewcomerPlan, ports: NewcomerPorts): Promise<Newcomers> {
  const dlq = await ports.queues.describe(plan.dlqUrl);
  const registration = await ports.registrations.getRegistration(plan.dlqArn);
  const refusal = inventoryRefusal(dlq, registration);
  const found: Newcomers = {
    partial: true,
    partialReason: refusal,
    present: 0,
    returned: [],
    late: [],
    toPark: 0,
    payloadRefusal: null,
    warnings: [],
  };
  if (refusal) return found;
  const deps: InventoryDeps = {
    queues: ports.queues,
    envelopes: ports.envelopes,
    remainingTimeMs: ports.remainingTimeMs,
    now: ports.now,
  };
  const scan = await inventoryDlq(
    { dlq, registration, incidentId: plan.incidentId, lateArrival: true },
    deps,
  );
  // A message another receiver holds invisible is not received: it could be either kind.
  found.partial = scan.partial || scan.unprocessed > 0 || dlq.inFlight > 0;
  found.partialReason = scan.partial
    ? `the inventory stopped (${scan.stopReason}) after ${scan.envelopes.length} message(s)`
    : scan.unprocessed > 0
      ? `${scan.unprocessed} envelope(s) could not be stored`
      : dlq.inFlight > 0
        ? `${dlq.inFlight} message(s) were held invisible by another receiver during the inventory`
        : null;
  found.present = scan.envelopes.length;
  const present = new Set(scan.envelopes.map((e) => e.messageId));
  const created = new Set(scan.createdMessageIds);
  /** Late arrivals not already to park, whose pointer is checked below. */
  const unparkedPointers = new Set<string>();
  for (const envelope of scan.envelopes) {
    if (!created.has(envelope.messageId)) continue;
    const newcomer: Newcomer = {
      messageId: envelope.messageId,
      idempotencyKey: envelope.idempotencyKey,
      sourceArn: envelope.sourceArn,
      classification: envelope.classification,
    };
    if (envelope.payload) newcomer.payload = envelope.payload;
    const sameKey = await ports.envelopes.findByIdempotencyKey(envelope.idempotencyKey);
    const left = sameKey.some((e) => e.dlqArn === plan.dlqArn && !present.has(e.messageId) && ofRun(e, plan));
    if (left) found.returned.push(newcomer);
    else {
      found.late.push(newcomer);
      if (parkReason(envelope, plan)) found.toPark += 1;
      else if (envelope.payload) unparkedPointers.add(envelope.messageId);
    }
  }
  const pointers = [...found.late, ...found.returned].flatMap((n) =>
    n.payload ? [{ messageId: n.messageId, payload: n.payload, goneAt: undefined }] : [],
  );
  if (ports.payloads && pointers.length > 0) {
    const checked = await checkPayloadPointers(
      plan.dlqArn,
      pointers,
      ports.payloads,
      ports.envelopes,
      ports.now(),
      true,
    );
    found.payloadRefusal = checked.refusal ?? null;
    found.warnings.push(...checked.warnings);
    found.toPark += checked.goneIds.filter((id) => unparkedPointers.has(id)).length;
  }
  return found;
}

/**
 * The `newcomers` port of MoveTask and the recheck: {@link inventoryNewcomers} over these ports,
 * bounded by the invocation's remaining time.
 */
export function newcomersPort(
  ports: Omit<NewcomerPorts, 'remainingTimeMs' | 'now'>,
  context: { getRemainingTimeInMillis?: () => number },
): (plan: NewcomerPlan) => Promise<Newcomers> {
  return (plan) =>
    inventoryNewcomers(plan, {
      ...ports,
      remainingTimeMs: () => context.getRemainingTimeInMillis?.() ?? 300_000,
      now: Date.now,
    });
}

/** `{ <sourceArn>: count }` of some newcomers: which source queue's consumer they came back from. */
export function countBySource(newcomers: readonly Newcomer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const n of newcomers) counts[n.sourceArn] = (counts[n.sourceArn] ?? 0) + 1;
  return counts;
}
