/**
 * The recording mover (states MoverSample and MoverStep; docs/contracts.md, "The recording
 * mover"): everything StartMessageMoveTask cannot do, one message at a time in batches of ten,
 * driven by the workflow in bounded invocations, never one state per message.
 *
 * **Per message**, in the conservation order (DESIGN.md): the envelope (a message first seen now
 * gets one before anything else), the ledger entry with its idempotency key, the send to its
 * target (transferBatch: one batched send and one batched delete for up to ten messages), the
 * delete from the queue it was taken from, the envelope REDRIVEN with `(run <id>)`. A crash
 * anywhere leaves a recorded state the retried step completes: at worst a recorded duplicate
 * (ledger `resent`), never a loss.
 *
 * **What moves**: the plan's selection over the DLQ's envelopes (or, un-parking, the parked
 * envelopes of the DLQ, matched to the parking queue's copies by body hash and attributes), of
 * the classifications a run may redrive (selection.ts). The rest is held invisible while the pass
 * goes by and released at its end: it stays where it is, with its envelope. FIFO: a message held
 * in a group holds every later message of the group in this pass, so group order is kept.
 *
 * **Ramp and gate.** A step moves at `rampRates[rateIndex]` messages per second for one dwell (or
 * what is left of the function's time), then returns; the workflow calls the next step at once.
 * After a step at a rate has lasted one dwell and one return window (`preflight.verifyWindowSeconds`,
 * the destinations' DelaySeconds + visibility timeout x maxReceiveCount + margin) with no
 * re-inflow, the next step goes one rate up. **Re-inflow is exact**: every message the mover
 * receives is keyed, and a message without an envelope whose key belongs to an envelope this run
 * redrove is a copy that came back: the run halts at once (`decision: 'halt'`), naming how many and
 * from where. When a whole pass finds nothing more to move, the mover drains: it waits one return
 * window after its last send (`decision: 'drain'`, the ASL's Wait), passes once more, and is `done`
 * only when nothing came back.
 *
 * **Bounded**: the steps of one execution are capped by {@link MAX_MOVER_STEPS}, derived from
 * Step Functions' 25,000 history events; at the cap the run halts, with what it moved.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/interleaving-multiple-ordered-message-groups.html
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html (25,000 history events)
 */
import type { Message } from '@aws-sdk/client-sqs';
import type { AuditTrail } from '#incident/audit-trail.js';
import type { CancelRequests } from '#incident/cancel-requests.js';
import { ExecutionPlan } from '#incident/execution-plan.js';
import { scanDlq, type VisitResult } from '#inventory/dlq-scan.js';
import { buildEnvelope, type EnvelopeWrite } from '#inventory/envelope.js';
import type { EnvelopeStore, StoredEnvelope } from '#inventory/envelope-store.js';
import { idempotencyKeyOfMessage, sha256Hex, toStoredAttributes } from '#inventory/idempotency-key.js';
import type { QueueRegistration, StoredMessageAttribute } from '#inventory/model.js';
import { TransientError } from '#platform/errors.js';
import { rampReasonText } from '#platform/reasons-text.js';
import type { ClientScope } from '#platform/scoped-clients.js';
import { sleep } from '#platform/sleep.js';
import type { QueueInfo, SqsQueues } from '#platform/sqs-queues.js';
import * as z from '#platform/zod.js';
import {
  type BatchTransferRequest,
  type BatchTransferResult,
  type TransferSqs,
  transferBatch,
} from '#transfer/message-transfer.js';
import { accessTo, parseArn, targetRefOf } from '#transfer/mover-targets.js';
import {
  eventVerdict,
  MAX_MOVER_STEPS,
  moverPreStep,
  moverVerdict,
  RampState,
  type RampVerdict,
  rateInForce,
  stepBudget,
} from '#transfer/ramp-policy.js';
import type { RedriveLedger } from '#transfer/redrive-ledger.js';
import { matchesSelection, needsPayload, notRedrivable, payloadOf } from '#transfer/selection.js';
import { buildCopy, type Copy, type CopyProblem, type MoverTarget } from './copy.js';
import type { TargetSender } from './senders.js';

/** What a step decided; the ASL's MoverDecision? state routes on it. */
export const MOVER_DECISIONS = ['continue', 'drain', 'done', 'halt', 'cancelled'] as const;
export type MoverDecision = (typeof MOVER_DECISIONS)[number];

/** Why messages were left where they are, counted. */
export const LEFT_BEHIND = [
  'no-room',
  'too-large',
  'not-json',
  'cannot-edit',
  'aws-source',
  'no-target',
  'send-failed',
  'payload-unchecked',
] as const;
export type LeftBehindReason = (typeof LEFT_BEHIND)[number];

/** The stateReason of an extended-client message the mover saw first: left for a run that checks its S3 object. */
export const PAYLOAD_UNCHECKED =
  'first seen by the recording mover, its extended-client payload not checked yet';

export { MAX_MOVER_STEPS };
/** Held FIFO groups named in `$.mover.fifoGroupsHeld` (the rest are counted). */
export const HELD_GROUP_EXAMPLES = 5;
/** Function time kept free at the end of a step, milliseconds. */
const TIME_MARGIN_MS = 20_000;
/** Most messages held invisible by one pass (far below SQS's ~120,000 in flight). */
const MAX_HELD = 20_000;

/** A count of messages (or steps): an integer, 0 or more. */
const count = z.number().check(z.int(), z.gte(0));

/** `$.ramp` of the recording mover: the shared ramp state plus what the mover counts. Times are epoch ms. */
export const MoverState = z.extend(RampState, {
  decision: z._default(z.enum(MOVER_DECISIONS), 'continue'),
  /** Messages this run's mover moved (sample included). */
  moved: z._default(count, 0),
  /** Messages the plan selected (Preflight's count, plus late arrivals selected since). */
  selected: z._default(count, 0),
  steps: z._default(count, 0),
  lastSentAt: z._default(z.nullable(z.number()), null),
  /** Seconds the workflow waits before the next step (drain). */
  waitSeconds: z._default(z.number().check(z.gte(0)), 0),
  duplicateSendsPrevented: z._default(count, 0),
  possibleDuplicateSends: z._default(count, 0),
  edited: z._default(count, 0),
  /** Messages left in the DLQ by reason, each counted once however many passes saw it. */
  leftBehind: z._default(z.record(z.string(), z.number()), {}),
  /**
   * The envelopes (DLQ MessageIds) behind `leftBehind`, by reason: a held message is seen again by
   * every later pass, and is counted once.
   */
  leftBehindIds: z._default(z.record(z.string(), z.array(z.string())), {}),
  /**
   * FIFO, as the latest pass saw it: message groups held in the DLQ from their first message that
   * may not be moved (that message and every later one of its group stay, in order), and up to
   * {@link HELD_GROUP_EXAMPLES} of them as `<group> at <MessageId> (<why>)`.
   */
  fifoGroupsHeld: z.optional(z.object({ groups: z.number(), examples: z.array(z.string()) })),
  /**
   * As the latest complete pass saw the queue: messages held behind their FIFO group's first
   * message that may not move (counted here, not as selected), and messages the plan does not
   * select (or may not redrive). With `moved` and `leftBehind`, they add up to what the run saw.
   */
  heldBehind: z.optional(count),
  notSelected: z.optional(count),
});
export type MoverState = z.infer<typeof MoverState>;

/** Input of the Mover function. */
export const MoverInput = z.object({
  action: z.enum(['sample', 'step']),
  /** `$.plan`: ValidateInput's output, parsed with the schema it was written with. */
  plan: ExecutionPlan,
  preflight: z.looseObject({
    /** The return window of a moved message, seconds. */
    verifyWindowSeconds: z.number().check(z.gte(0)),
    fifo: z.boolean(),
    selection: z.optional(z.looseObject({ selected: count })),
  }),
  /** `$.ramp`: the previous step's state, or `{ decision: 'start' }` (the ASL's StartMover) before the first. */
  mover: z.optional(z.union([MoverState, z.looseObject({ decision: z.literal('start') })])),
  /** `$.sample` of MoverSample: the first step counts what it moved. */
  sample: z.optional(z.looseObject({ keys: z.array(z.string()), edited: z.optional(z.number()) })),
  /** `$$.Execution.Name`, for the audit of edits. */
  executionName: z.optional(z.string()),
});
export type MoverInput = z.infer<typeof MoverInput>;

/** `$.sample` when the mover takes the sample (VerifySample reads it), plus what was left behind. */
export interface MoverSampleResult {
  redriveId: string;
  sent: number;
  alreadySent: number;
  keys: string[];
  verifyAfterSeconds: number;
  duplicateSendsPrevented: number;
  noRoomForAttributes: number;
  /** Copies of the sample sent edited (a transform). */
  edited: number;
  leftBehind: Record<string, number>;
}

/** Ports of the mover. */
export interface MoverDeps {
  /** SQS of the DLQ's account and Region: receive, release, describe, look up queues. */
  queues: Pick<SqsQueues, 'receive' | 'changeVisibility' | 'describe' | 'resolveByName'>;
  /** SQS lookups in another account or Region (the target's scope). */
  queuesIn(scope: ClientScope): Pick<SqsQueues, 'resolveByName'>;
  envelopes: Pick<
    EnvelopeStore,
    'getEnvelopes' | 'findByIdempotencyKey' | 'putEnvelopes' | 'setState' | 'listEnvelopes'
  >;
  ledger: RedriveLedger;
  /** Deletes from the queue the messages are taken from. */
  sqs: Required<Pick<TransferSqs, 'deleteBatch'>>;
  sender: TargetSender;
  registrations: { getRegistration(dlqArn: string): Promise<QueueRegistration> };
  audit?: Pick<AuditTrail, 'record'>;
  /** A person's request to stop the run (Slack Cancel, `dlq cancel`); every step reads it first. */
  cancelRequests?: Pick<CancelRequests, 'get'>;
  /** Lambda's `getRemainingTimeInMillis`. */
  remainingTimeMs: () => number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Visibility timeout of each receive, seconds (how long a crashed step hides messages). @default 60 */
  visibilityTimeoutSeconds?: number;
}

/** A target resolved for sending: where, and with which clients. */
interface Resolved {
  target: MoverTarget;
  scope: ClientScope | undefined;
}

/** What one pass did. */
interface PassResult {
  moved: number;
  keys: string[];
  duplicatesPrevented: number;
  resent: number;
  edited: number;
  reinflow: Array<{ key: string; sourceArn: string }>;
  late: number;
  lateSelected: number;
  leftBehind: Partial<Record<LeftBehindReason, number>>;
  /** The envelopes (DLQ MessageIds) left behind, by reason. */
  leftBehindIds: Partial<Record<LeftBehindReason, string[]>>;
  sendFailures: string[];
  /** FIFO: message group -> the message that holds it and why (the group stays in the DLQ from there). */
  heldGroups: Map<string, string>;
  /** FIFO: messages held behind their group's first message that may not move. */
  heldBehind: number;
  /** Messages the plan does not select or may not redrive (each held where it is). */
  notSelected: number;
  /** True when the pass saw the whole queue (it ended on empty receives, not on a limit). */
  complete: boolean;
  lastSentAt: number | null;
}

interface Ctx {
  input: MoverInput;
  deps: MoverDeps;
  plan: ExecutionPlan;
  registration: QueueRegistration;
  redriveId: string;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  vt: number;
  /** The queue the messages are taken from: the DLQ, or the parking queue when un-parking. */
  sourceUrl: string;
  dlq: QueueInfo;
  targets: Map<string, Resolved | { refusal: string }>;
  parked?: Map<string, StoredEnvelope[]>;
}

/** The content fingerprint of a body and its attributes (how a parked copy finds its envelope). */
export function contentFingerprint(
  bodySha256: string,
  attributes: Record<string, StoredMessageAttribute>,
): string {
  const sorted = Object.keys(attributes)
    .sort()
    .map((name) => {
      const a = attributes[name] as StoredMessageAttribute;
      return [name, a.dataType, a.stringValue ?? null, a.binaryValueBase64 ?? null];
    });
  return sha256Hex(JSON.stringify([bodySha256, sorted]));
}

/** The state's starting values: the sample was verified, so the ramp starts clean. */
function initialState(input: MoverInput, now: number): MoverState {
  const sampled = input.sample?.keys.length ?? 0;
  return MoverState.parse({
    decision: 'continue',
    rate: input.plan.rampRates[0] ?? 1,
    moved: sampled,
    selected: input.preflight.selection?.selected ?? 0,
    // The sample's edited copies count too (`moved` counts its keys).
    edited: input.sample?.edited ?? 0,
    returnWindowSeconds: input.preflight.verifyWindowSeconds,
    cleanMoved: sampled,
    cleanAt: now,
  });
}

async function context(input: MoverInput, deps: MoverDeps): Promise<Ctx> {
  const plan = input.plan;
  const registration = await deps.registrations.getRegistration(plan.dlqArn);
  const dlq = await deps.queues.describe(plan.dlqUrl);
  if (plan.unpark && !plan.parkingQueueUrl)
    throw new TransientError('un-park needs a parking queue, and the plan names none');
  const ctx: Ctx = {
    input,
    deps,
    plan,
    registration,
    // The run (`plan.runId`): one execution owns its ledger entries.
    redriveId: plan.runId ?? plan.incidentId,
    now: deps.now ?? Date.now,
    sleep: deps.sleep ?? sleep,
    vt: deps.visibilityTimeoutSeconds ?? 60,
    sourceUrl: plan.unpark ? (plan.parkingQueueUrl as string) : plan.dlqUrl,
    dlq,
    targets: new Map(),
  };
  if (plan.unpark) {
    ctx.parked = new Map();
    for await (const e of deps.envelopes.listEnvelopes(plan.dlqArn)) {
      if (e.state !== 'PARKED') continue;
      const fp = contentFingerprint(e.bodySha256, e.messageAttributes);
      ctx.parked.set(fp, [...(ctx.parked.get(fp) ?? []), e]);
    }
  }
  return ctx;
}

/** The resolved target of an envelope (cached per ARN), or why there is none. */
async function targetOf(ctx: Ctx, envelope: StoredEnvelope): Promise<Resolved | { refusal: string }> {
  const ref = targetRefOf(envelope, ctx.plan);
  if (ref.kind === null) return { refusal: ref.reason };
  const cached = ctx.targets.get(ref.arn);
  if (cached) return cached;
  const access = accessTo(ref.arn, ctx.plan.dlqArn, ctx.registration.accessRoles);
  let resolved: Resolved | { refusal: string };
  if (!access.ok) resolved = { refusal: access.refusal };
  else if (ref.kind === 'sqs') {
    const parts = parseArn(ref.arn);
    const queues = access.scope ? ctx.deps.queuesIn(access.scope) : ctx.deps.queues;
    const info = await queues.resolveByName(parts?.resource ?? ref.arn, parts?.accountId);
    resolved = {
      target: {
        kind: 'sqs',
        arn: info.arn,
        url: info.url,
        fifo: info.fifo,
        maxMessageBytes: Number(info.attributes.MaximumMessageSize ?? 262_144),
      },
      scope: access.scope,
    };
  } else if (ref.kind === 'sns')
    resolved = {
      target: { kind: 'sns', arn: ref.arn, fifo: ref.arn.endsWith('.fifo') },
      scope: access.scope,
    };
  else resolved = { target: { kind: ref.kind, arn: ref.arn }, scope: access.scope };
  ctx.targets.set(ref.arn, resolved);
  return resolved;
}

/** True when a message without an envelope is a copy this run sent that came back. */
async function returnedOfRun(ctx: Ctx, key: string): Promise<boolean> {
  const sameKey = await ctx.deps.envelopes.findByIdempotencyKey(key);
  return sameKey.some(
    (e) =>
      e.dlqArn === ctx.plan.dlqArn &&
      e.state === 'REDRIVEN' &&
      (e.stateReason?.includes(`(run ${ctx.redriveId})`) ?? false),
  );
}

/** One message ready to send. */
interface Ready {
  message: Message;
  envelope: StoredEnvelope;
  resolved: Resolved;
  copy: Copy;
  edited: boolean;
  editedSha256: string | null;
}

/** The group of a FIFO message (undefined on a standard queue). */
const groupOf = (m: Message) => m.Attributes?.MessageGroupId;

/** Limits of a pass. */
interface PassLimits {
  /** Most messages to move (the sample size, or what the step's rate allows). */
  maxMessages: number;
  /** Stop taking new batches at this time, epoch ms. */
  untilMs: number;
  /** Messages per second, or null for as fast as the batches go. */
  rate: number | null;
}

/** A pass in progress: what it did so far, the FIFO groups it holds, whether a limit stopped it. */
interface Pass {
  out: PassResult;
  limits: PassLimits;
  started: number;
  blockedGroups: Set<string>;
  stoppedByLimit: boolean;
}

/** Counts a message left in the DLQ, by reason, with its envelope's MessageId. */
function leave(p: Pass, reason: LeftBehindReason, envelope: StoredEnvelope): void {
  p.out.leftBehind[reason] = (p.out.leftBehind[reason] ?? 0) + 1;
  const ids = p.out.leftBehindIds[reason] ?? [];
  ids.push(envelope.messageId);
  p.out.leftBehindIds[reason] = ids;
}

/**
 * FIFO: a held message holds every later message of its group in this pass, so nothing of the
 * group overtakes it; `why` names a hold the run report must show (not a limit).
 */
function holdGroup(p: Pass, message: Message, why?: string): void {
  const group = groupOf(message);
  if (group === undefined) return;
  p.blockedGroups.add(group);
  if (why !== undefined && !p.out.heldGroups.has(group))
    p.out.heldGroups.set(group, `${message.MessageId} (${why})`);
}

/**
 * One pass over the source queue: moves what is selected, within the limits.
 */
async function pass(ctx: Ctx, limits: PassLimits): Promise<PassResult> {
  const p: Pass = {
    out: {
      moved: 0,
      keys: [],
      duplicatesPrevented: 0,
      resent: 0,
      edited: 0,
      reinflow: [],
      late: 0,
      lateSelected: 0,
      leftBehind: {},
      leftBehindIds: {},
      sendFailures: [],
      heldGroups: new Map(),
      heldBehind: 0,
      notSelected: 0,
      complete: false,
      lastSentAt: null,
    },
    limits,
    started: ctx.now(),
    blockedGroups: new Set(),
    stoppedByLimit: false,
  };
  const scan = await scanDlq(
    ctx.deps.queues,
    {
      queueUrl: ctx.sourceUrl,
      visibilityTimeoutSeconds: ctx.vt,
      maxMessages: Number.MAX_SAFE_INTEGER,
      maxHeld: MAX_HELD,
      waitTimeSeconds: 0,
      emptyReceives: 2,
    },
    (batch) => visitBatch(ctx, p, batch),
  );
  p.out.complete = !p.stoppedByLimit && !scan.truncated;
  return p.out;
}

/** One received batch: admit each message, record the first-seen ones, send what is ready. */
async function visitBatch(
  ctx: Ctx,
  p: Pass,
  batch: Message[],
): Promise<{ results: Map<string, VisitResult>; stop: boolean }> {
  const results = new Map<string, VisitResult>();
  for (const m of batch) results.set(m.MessageId as string, 'hold');
  const envelopes = await envelopesOf(ctx, batch);
  const late: EnvelopeWrite[] = [];
  const ready: Ready[] = [];
  for (const message of batch) {
    const admitted = await admit(ctx, p, message, envelopes, late, ready.length);
    if (admitted) ready.push(admitted);
  }
  // Record first: envelopes of messages first seen now exist before anything is sent.
  if (late.length > 0) {
    const stored = await ctx.deps.envelopes.putEnvelopes(late, { deadlineMs: ctx.now() + 10_000 });
    if (stored.unprocessed > 0)
      throw new TransientError(
        `${stored.unprocessed} envelope(s) of messages first seen now could not be stored`,
      );
  }
  // A copy of this run came back: the consumer fails it again. Send nothing more.
  if (p.out.reinflow.length > 0) {
    p.stoppedByLimit = true;
    return { results, stop: true };
  }
  if (ready.length > 0) await sendPaced(ctx, p, ready, results);
  const limited = p.out.moved >= p.limits.maxMessages || ctx.now() >= p.limits.untilMs;
  const halt = p.out.sendFailures.length > 0;
  if (limited || halt) p.stoppedByLimit = true;
  return { results, stop: limited || halt };
}

/**
 * A message without an envelope: a copy of this run that came back (re-inflow: null), or a
 * message first seen now, which gets its envelope (stored before anything is sent).
 */
async function firstSeen(
  ctx: Ctx,
  p: Pass,
  message: Message,
  late: EnvelopeWrite[],
): Promise<StoredEnvelope | null> {
  const { plan } = ctx;
  const key = idempotencyKeyOfMessage(message, { producerKey: ctx.registration.producerKey }).key;
  if (await returnedOfRun(ctx, key)) {
    p.out.reinflow.push({ key, sourceArn: message.Attributes?.DeadLetterQueueSourceArn ?? 'unknown' });
    holdGroup(p, message);
    return null;
  }
  const write = buildEnvelope(message, {
    dlqArn: plan.dlqArn,
    fifo: ctx.dlq.fifo,
    retentionPeriodSeconds: ctx.dlq.retentionPeriodSeconds,
    now: ctx.now(),
    registration: ctx.registration,
    incidentId: plan.incidentId,
    // First seen by this run, after the inventory: Reconcile counts it a late arrival.
    lateArrival: true,
  });
  // An extended-client pointer first seen here has had no HeadObject (Preflight and the recheck
  // check the pointers of envelopes that exist): this run records it and leaves it in the DLQ,
  // holding its FIFO group; the next run's Preflight checks its object first.
  if (write.envelope.payload !== undefined && !plan.unpark)
    write.envelope.stateReason = `${PAYLOAD_UNCHECKED} (run ${ctx.redriveId})`;
  late.push(write);
  p.out.late += 1;
  return write.envelope;
}

/** One received message: the copy ready to send, or null when it stays (counted, its FIFO group held). */
async function admit(
  ctx: Ctx,
  p: Pass,
  message: Message,
  envelopes: Map<string, StoredEnvelope>,
  late: EnvelopeWrite[],
  readyCount: number,
): Promise<Ready | null> {
  const { plan } = ctx;
  const { out } = p;
  const group = groupOf(message);
  if (group !== undefined && p.blockedGroups.has(group)) {
    out.heldBehind += 1;
    return null;
  }
  const known = envelopes.get(message.MessageId as string);
  if (!known && plan.unpark) {
    out.notSelected += 1;
    holdGroup(p, message);
    return null; // a parked copy of another DLQ, or parked by hand
  }
  const envelope = known ?? (await firstSeen(ctx, p, message, late));
  if (!envelope) return null;
  if (
    envelope.state !== 'IN_DLQ' &&
    !plan.unpark &&
    !envelope.stateReason?.includes(`(run ${ctx.redriveId})`)
  ) {
    out.notSelected += 1;
    holdGroup(p, message);
    return null; // parked or discarded by a step that has not deleted it yet
  }
  if (envelope.state === 'IN_DLQ' && envelope.stateReason === `${PAYLOAD_UNCHECKED} (run ${ctx.redriveId})`) {
    leave(p, 'payload-unchecked', envelope);
    holdGroup(p, message, 'extended-client payload not checked yet: the next run checks its S3 object first');
    return null;
  }
  const payload = needsPayload(plan.selection) ? payloadOf(message.Body ?? '') : undefined;
  const refused = notRedrivable(envelope, plan);
  if (!matchesSelection(envelope, plan.selection, payload) || refused) {
    out.notSelected += 1;
    holdGroup(p, message, refused ?? 'not selected');
    return null;
  }
  if (!known) out.lateSelected += 1;
  if (out.moved + readyCount >= p.limits.maxMessages) {
    holdGroup(p, message);
    return null;
  }
  const resolved = await targetOf(ctx, envelope);
  if ('refusal' in resolved) {
    leave(p, 'no-target', envelope);
    holdGroup(p, message, 'no target');
    return null;
  }
  const built = buildCopy({
    message,
    envelope,
    target: resolved.target,
    key: envelope.idempotencyKey,
    redriveId: ctx.redriveId,
    transform: plan.transform,
  });
  if (!built.ok) {
    leave(p, built.problem as CopyProblem, envelope);
    holdGroup(p, message, built.problem);
    return null;
  }
  return {
    message,
    envelope,
    resolved,
    copy: built.copy,
    edited: built.edited,
    editedSha256: built.editedSha256,
  };
}

/** Sends the ready messages at the pass's rate and counts what moved, what failed, what another run owns. */
async function sendPaced(
  ctx: Ctx,
  p: Pass,
  ready: readonly Ready[],
  results: Map<string, VisitResult>,
): Promise<void> {
  const { out, limits } = p;
  if (limits.rate !== null) {
    const due = p.started + ((out.moved + ready.length) / limits.rate) * 1000;
    const wait = due - ctx.now();
    if (wait > 0) await ctx.sleep(Math.min(wait, Math.max(0, limits.untilMs - ctx.now())));
  }
  const moved = await send(ctx, ready);
  for (const r of ready) {
    const result = moved.get(r.message.MessageId as string);
    if (!result) continue;
    if (result.result === 'send-failed') {
      leave(p, 'send-failed', r.envelope);
      out.sendFailures.push(`${r.resolved.target.arn}: ${result.code} ${result.message}`);
      const g = groupOf(r.message);
      if (g !== undefined) p.blockedGroups.add(g);
      continue;
    }
    if (result.result === 'busy') continue; // another run owns it: left alone
    if (!result.deleted) continue;
    results.set(r.message.MessageId as string, 'consumed');
    out.moved += 1;
    out.keys.push(r.envelope.idempotencyKey);
    if (result.result === 'duplicate-prevented') out.duplicatesPrevented += 1;
    else if (result.resent) out.resent += 1;
    if (r.edited) out.edited += 1;
    out.lastSentAt = ctx.now();
  }
}

/** The envelopes of a received batch: by DLQ MessageId, or (un-park) by content among the parked ones. */
async function envelopesOf(ctx: Ctx, batch: readonly Message[]): Promise<Map<string, StoredEnvelope>> {
  if (!ctx.parked)
    return ctx.deps.envelopes.getEnvelopes(
      ctx.plan.dlqArn,
      batch.map((m) => m.MessageId as string),
    );
  const found = new Map<string, StoredEnvelope>();
  for (const m of batch) {
    const fp = contentFingerprint(sha256Hex(m.Body ?? ''), toStoredAttributes(m.MessageAttributes));
    const candidates = ctx.parked.get(fp);
    const envelope = candidates?.shift();
    if (envelope) found.set(m.MessageId as string, envelope);
  }
  return found;
}

/** Records, sends (grouped by target, ten at a time) and deletes the ready messages; marks their envelopes. */
async function send(ctx: Ctx, ready: readonly Ready[]): Promise<Map<string, BatchTransferResult>> {
  const { deps, plan } = ctx;
  const byMessage = new Map(ready.map((r) => [r.message.MessageId as string, r]));
  const requests: BatchTransferRequest[] = ready.map((r) => ({
    id: r.message.MessageId as string,
    key: r.envelope.idempotencyKey,
    incidentId: plan.incidentId,
    redriveId: ctx.redriveId,
    kind: 'redrive',
    dlqArn: plan.dlqArn,
    // Un-parking, the message in hand is the parked copy: Park's entry for the DLQ message says
    // SENT and would read as "already sent" (the copy deleted, never sent back).
    ledgerMessageId: plan.unpark ? (r.message.MessageId as string) : r.envelope.messageId,
    // ...and names the envelope it settles, so Reconcile reads this entry, not Park's, for it.
    ...(plan.unpark ? { envelopeMessageId: r.envelope.messageId } : {}),
    receiptHandle: r.message.ReceiptHandle as string,
    destination: r.resolved.target.kind === 'sqs' ? r.resolved.target.url : r.resolved.target.arn,
    visibilityTimeoutSeconds: ctx.vt,
  }));
  const results = await transferBatch(requests, {
    ledger: deps.ledger,
    now: ctx.now,
    deleteBatch: (handles) => deps.sqs.deleteBatch(ctx.sourceUrl, handles),
    async send(toSend) {
      const outcomes = new Map<
        string,
        { ok: true; sentId: string | null } | { ok: false; code: string; message: string }
      >();
      const groups = new Map<string, Ready[]>();
      // A FIFO copy goes with its ledger entry's MessageDeduplicationId (the same for every resend).
      const deduplicationIds = new Map(toSend.map((request) => [request.id, request.deduplicationId]));
      for (const request of toSend) {
        const r = byMessage.get(request.id) as Ready;
        const id = r.resolved.target.arn;
        groups.set(id, [...(groups.get(id) ?? []), r]);
      }
      for (const group of groups.values()) {
        const first = group[0] as Ready;
        const sent = await deps.sender.send(
          first.resolved.target,
          group.map((r) =>
            'deduplicationId' in r.copy && r.copy.deduplicationId !== undefined
              ? { ...r.copy, deduplicationId: deduplicationIds.get(r.message.MessageId as string) as string }
              : r.copy,
          ),
          first.resolved.scope,
        );
        for (const [i, r] of group.entries())
          outcomes.set(
            r.message.MessageId as string,
            sent[i] ?? { ok: false, code: 'Unknown', message: 'no outcome' },
          );
      }
      return toSend.map(
        (request) => outcomes.get(request.id) ?? { ok: false, code: 'Unknown', message: 'no outcome' },
      );
    },
  });
  const reason = (r: Ready) =>
    `${plan.unpark ? 'un-parked' : 'recording mover'} to ${r.resolved.target.arn}${r.edited ? ` (edited: sha256:${r.editedSha256})` : ''} (run ${ctx.redriveId})`;
  await Promise.all(
    results.map(async (result) => {
      if ((result.result !== 'sent' && result.result !== 'duplicate-prevented') || !result.deleted) return;
      const r = byMessage.get(result.id) as Ready;
      await deps.envelopes.setState(plan.dlqArn, r.envelope.messageId, 'REDRIVEN', reason(r));
    }),
  );
  const edits = ready.filter(
    (r) => r.edited && results.some((x) => x.id === r.message.MessageId && x.result === 'sent'),
  );
  if (edits.length > 0 && deps.audit && plan.transform)
    await deps.audit.record({
      incidentId: plan.incidentId,
      entryId: `edit#${ctx.input.executionName ?? ctx.redriveId}#${edits[0]?.envelope.messageId}`,
      kind: 'messages-edited',
      at: ctx.now(),
      by: plan.requestedBy,
      via: 'workflow',
      executionName: ctx.input.executionName ?? null,
      text: `${edits.length} message(s) edited and resubmitted: ${plan.transform.reason}`,
      transform: plan.transform,
      edits: edits.map((r) => ({
        messageId: r.envelope.messageId,
        originalSha256: r.envelope.bodySha256,
        editedSha256: r.editedSha256 as string,
        target: r.resolved.target.arn,
      })),
      approval: { decision: 'approved', by: plan.approvedBy, reason: null },
    });
  return new Map(results.map((r) => [r.id, r]));
}

/**
 * The left-behind envelopes of the state so far plus a pass's, each MessageId once per reason
 * (a held message stays in the DLQ and every later pass sees it again).
 */
function unionIds(
  a: Record<string, string[]> | undefined,
  b: Partial<Record<string, string[]>>,
): Record<string, string[]> {
  const out: Record<string, string[]> = { ...a };
  for (const [reason, ids] of Object.entries(b))
    out[reason] = [...new Set([...(out[reason] ?? []), ...(ids ?? [])])];
  return out;
}

/**
 * MoverSample: moves up to `plan.sampleSize` selected messages, as fast as the batches go, and
 * reports them the way SampleRedrive does (`$.sample`), so WaitForVerification and VerifySample
 * run unchanged.
 * @throws TransientError on throttling/5xx (safe to retry: the ledger resumes what was recorded).
 */
export async function moverSample(input: MoverInput, deps: MoverDeps): Promise<MoverSampleResult> {
  const ctx = await context(input, deps);
  const earlier = (await deps.ledger.list(input.plan.dlqArn)).filter(
    (e) => e.redriveId === ctx.redriveId && e.kind === 'redrive' && e.dlqDeleted,
  );
  const need = Math.max(0, input.plan.sampleSize - earlier.length);
  const result =
    need > 0
      ? await pass(ctx, {
          maxMessages: need,
          untilMs: ctx.now() + Math.max(0, deps.remainingTimeMs() - TIME_MARGIN_MS),
          rate: null,
        })
      : undefined;
  const keys = [...new Set([...earlier.map((e) => e.key), ...(result?.keys ?? [])])].slice(
    0,
    input.plan.sampleSize,
  );
  return {
    redriveId: ctx.redriveId,
    sent: (result?.moved ?? 0) - (result?.duplicatesPrevented ?? 0),
    alreadySent: earlier.length,
    keys,
    verifyAfterSeconds: input.preflight.verifyWindowSeconds,
    duplicateSendsPrevented: result?.duplicatesPrevented ?? 0,
    noRoomForAttributes: result?.leftBehind['no-room'] ?? 0,
    edited: result?.edited ?? 0,
    leftBehind: result?.leftBehind ?? {},
  };
}

/** The ASL decision of a policy action. */
const DECISION_OF: Partial<Record<RampVerdict['action'], MoverDecision>> = {
  drain: 'drain',
  halt: 'halt',
  done: 'done',
  cancelled: 'cancelled',
};

/** The state with a verdict applied; nothing moves while the run drains or once it ended. */
function applied(state: MoverState, v: RampVerdict, now: number): MoverState {
  const decision = DECISION_OF[v.action] ?? 'continue';
  const next = { ...state, ...v.patch, decision, rateIndex: v.rateIndex, rate: v.rate };
  return {
    ...next,
    ...(decision === 'continue' ? {} : rateInForce(next, 0, now, next.moved)),
    waitSeconds: decision === 'drain' ? v.dwellSeconds : 0,
    why: v.why,
    reason: rampReasonText(v.why),
  };
}

/**
 * MoverStep: one step of the ramp (see the module comment): measure a pass, ask the policy, act.
 * @throws TransientError on throttling/5xx (safe to retry: the ledger resumes what was recorded).
 */
export async function moverStep(input: MoverInput, deps: MoverDeps): Promise<MoverState> {
  const now = (deps.now ?? Date.now)();
  const prev =
    input.mover && input.mover.decision !== 'start'
      ? MoverState.parse(input.mover)
      : initialState(input, now);
  const state: MoverState = {
    ...prev,
    steps: prev.steps + 1,
    waitSeconds: 0,
    returnWindowSeconds: input.preflight.verifyWindowSeconds,
  };
  const { plan } = input;
  const cancel = await deps.cancelRequests?.get(plan.incidentId, input.executionName ?? plan.incidentId);
  if (cancel) {
    const why = {
      code: 'cancelled',
      ...cancel,
      note: cancel.reason ?? null,
      moved: state.moved,
      restInDlq: true,
    } as const;
    return applied(state, eventVerdict(plan, state, { now, moved: state.moved }, why), now);
  }
  const pre = moverPreStep(plan, state, { now, moved: state.moved, steps: state.steps });
  // A drain that still waits is not a step.
  if (pre) return applied(pre.action === 'drain' ? { ...state, steps: prev.steps } : state, pre, now);
  const ctx = await context(input, deps);
  const budgetMs = Math.min(
    plan.dwellSeconds * 1000,
    Math.max(1000, deps.remainingTimeMs() - TIME_MARGIN_MS),
  );
  const passStartedAt = ctx.now();
  const running: MoverState = { ...state, ...rateInForce(state, state.rate, passStartedAt, state.moved) };
  const result = await pass(ctx, {
    maxMessages: stepBudget(state.rate, budgetMs / 1000),
    untilMs: passStartedAt + budgetMs,
    rate: state.rate,
  });
  const next = tally(running, result);
  const empty = result.complete && result.moved === 0 && result.reinflow.length === 0;
  // An empty pass is not an empty queue while messages are in flight.
  const inFlight =
    empty && result.sendFailures.length === 0 ? (await deps.queues.describe(ctx.sourceUrl)).inFlight : null;
  const v = moverVerdict(plan, running, {
    now: ctx.now(),
    passStartedAt,
    moved: next.moved,
    passMoved: result.moved,
    returned: result.reinflow.length,
    returnedBySource: countSources(result.reinflow),
    sendFailures: result.sendFailures,
    complete: result.complete,
    inFlight,
    lastSentAt: next.lastSentAt,
    visibilitySeconds: ctx.vt,
    queue: ctx.sourceUrl.split('/').pop() ?? ctx.sourceUrl,
    selected: next.selected,
    left: next.leftBehind,
    fifoHeld: next.heldBehind ?? 0,
    notSelected: next.notSelected ?? 0,
    heldGroups: next.fifoGroupsHeld ?? null,
  });
  return applied(next, v, ctx.now());
}

/** Re-inflow by the source queue it came back from. */
function countSources(returned: ReadonlyArray<{ sourceArn: string }>): Record<string, number> {
  const bySource: Record<string, number> = {};
  for (const r of returned) bySource[r.sourceArn] = (bySource[r.sourceArn] ?? 0) + 1;
  return bySource;
}

/** The state's counts with a pass's added (what moved, what was left, what FIFO holds). */
function tally(state: MoverState, result: PassResult): MoverState {
  const next: MoverState = {
    ...state,
    moved: state.moved + result.moved,
    selected: state.selected + result.lateSelected,
    lastSentAt: result.lastSentAt ?? state.lastSentAt,
    lateArrivals: state.lateArrivals + result.late,
    duplicateSendsPrevented: state.duplicateSendsPrevented + result.duplicatesPrevented,
    possibleDuplicateSends: state.possibleDuplicateSends + result.resent,
    edited: state.edited + result.edited,
  };
  // A held message is still in the DLQ, and every later pass sees it again: count it once.
  next.leftBehindIds = unionIds(state.leftBehindIds, result.leftBehindIds);
  next.leftBehind = Object.fromEntries(
    Object.entries(next.leftBehindIds).map(([reason, ids]) => [reason, ids.length]),
  );
  if (result.complete) {
    next.heldBehind = result.heldBehind;
    next.notSelected = result.notSelected;
  }
  if (result.heldGroups.size > 0 || (result.complete && state.fifoGroupsHeld))
    next.fifoGroupsHeld = {
      groups: result.heldGroups.size,
      examples: [...result.heldGroups]
        .slice(0, HELD_GROUP_EXAMPLES)
        .map(([group, at]) => `${group} at ${at}`),
    };
  return next;
}
