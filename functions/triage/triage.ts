/**
 * Triage: an alarm transition in, envelopes and an incident per DLQ out, and the redrive workflow
 * started for every complete inventory of a DLQ with messages.
 *
 * Order of operations, so that bad input changes nothing and duplicates change nothing:
 * 1. normalise the event (pure; throws InvalidInputError naming the field);
 * 2. non-state-change events and transitions to OK / INSUFFICIENT_DATA: one log line, return;
 *    ALARM -> OK also tells the incidents of the alarm's latest ALARM transition that the alarm
 *    cleared (an `alarm-cleared` notification, once per transition), and nothing else: no
 *    workflow, no DLQ call, no cancellation; the workflow re-reads the DLQ before any redrive;
 * 3. resolve every queue (GetQueueUrl, attributes, registration) before any write: an unknown
 *    queue throws QueueNotFoundError and nothing is written;
 * 4. claim the transition (`ALARM#<dedupeKey>` / `TRANSITION`, conditional); a HANDLED transition
 *    or one in progress elsewhere is a duplicate: log 'duplicate alarm transition', return success;
 * 5. per DLQ: inventory, store envelopes, open (or update) the incident, start the workflow;
 * 6. point `ALARM#<alarmArn>` / `LATEST` at the incidents it opened (for a later ALARM -> OK);
 * 7. mark the transition HANDLED (or PARTIAL with a cursor, or FAILED so a retry completes it).
 */

import { type Incident, type IncidentStore, incidentIdOf } from '#incident/incident-store.js';
import type { NoticeKind, Notifier } from '#incident/notifier.js';
import type { QueueRegistry } from '#incident/queue-registry.js';
import type { EnvelopeStore } from '#inventory/envelope-store.js';
import { type InventoryBudgets, inventoryDlq, inventoryRefusal } from '#inventory/inventory.js';
import {
  HANDOVER_MARGIN_MS,
  type InventorySessionStore,
  inventoryStep,
  summaryOfSession,
} from '#inventory/inventory-session.js';
import type { AlarmRecord, IncidentSummary, QueueRegistration } from '#inventory/model.js';
import { type SummaryResult, summarise } from '#inventory/summary.js';
import {
  errorMessage,
  InvalidInputError,
  KmsKeyError,
  QueueNotFoundError,
  TransientError,
} from '#platform/errors.js';
import { type QueueInfo, queueNameOfUrl, type SqsQueues } from '#platform/sqs-queues.js';
import type { NormalisedAlarmEvent } from './alarm-event.js';
import { queueArnOf } from './alarm-event.js';
import { type AlarmDirectory, type ChildOutcome, resolveCompositeChildren } from './composite-alarm.js';
import type { WorkflowStarter } from './workflow-starter.js';

/** Configuration of triage (see `config.ts` for the environment variables). */
export interface TriageConfig {
  budgets: InventoryBudgets;
  /** Alarm name -> queue names, for alarms without a QueueName dimension (SEARCH expressions). */
  alarmQueueMap: Record<string, string[]>;
  /**
   * Extra lease on a claimed transition beyond the Lambda's remaining time, milliseconds. Kept
   * short: Lambda kills the claimant at its timeout, and its async retry (about a minute later)
   * must find the lease expired, or the retry would be taken for a duplicate. @default 5000
   */
  leaseMarginMs?: number;
}

/** A minimal logger (Powertools' Logger fits). */
export interface TriageLog {
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
}

/** Ports and settings of {@link triage}. */
export interface TriageDeps {
  queues: SqsQueues;
  envelopes: EnvelopeStore;
  /** Inventories that span invocations (standard DLQs): triage runs the first step. */
  sessions: InventorySessionStore;
  incidents: IncidentStore;
  registry: QueueRegistry;
  workflow: WorkflowStarter;
  /** Epoch milliseconds. */
  now: () => number;
  /** Lambda's `context.getRemainingTimeInMillis`. */
  remainingTimeMs: () => number;
  config: TriageConfig;
  log: TriageLog;
  /** Told about outcomes a person must see: unresolvable alarms, refusals, systemic failures. */
  notifier?: Notifier;
  /** CloudWatch DescribeAlarms: a composite alarm's children (without it composites are unresolvable). */
  alarms?: AlarmDirectory;
  /**
   * Lambda's `context.awsRequestId`: the same on every retry of one async invocation, so a retry
   * of a run that died holding the claim takes it back at once instead of being a duplicate.
   * @see https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html
   */
  requestId?: string;
}

/** What happened to one DLQ. */
export interface QueueOutcome {
  queueName: string;
  dlqArn: string;
  /**
   * `busy`: another alarm transition's run was inventorying this DLQ; its incident covers it.
   * `continuing`: the inventory stopped on a budget and goes on in the workflow it started
   * (`ContinueInventory`), holding what it has seen; approval comes once it is complete.
   */
  outcome: 'triaged' | 'continuing' | 'partial' | 'empty' | 'refused' | 'busy';
  reason: string;
  incidentId?: string;
  summary?: IncidentSummary;
  sourceArns?: string[];
  executionArn?: string;
  workflowAlreadyStarted?: boolean;
  written?: number;
}

/** What triage did with one event. */
export interface TriageResult {
  /**
   * `suppressed`: a composite alarm whose actions CloudWatch suppressed (its actions suppressor, or
   * the wait / extension period): nothing is read or peeked, as the alarm's owner asked.
   */
  outcome:
    | 'not-a-state-change'
    | 'ignored-transition'
    | 'unresolvable'
    | 'suppressed'
    | 'duplicate'
    | 'triaged';
  message: string;
  dedupeKey?: string;
  queues: QueueOutcome[];
  /**
   * ALARM -> OK only: the incidents told `alarm-cleared` by this delivery (empty for a
   * duplicate delivery, or an alarm that opened no incident).
   */
  alarmCleared?: string[];
  /** Composite alarms: what happened to each triggering child (followed or reported with why not). */
  children?: ChildOutcome[];
}

/** Kind of the notification an ALARM -> OK transition sends to each incident of that alarm. */
export const ALARM_CLEARED_KIND: NoticeKind = 'alarm-cleared';

/** An alarm timestamp (`2026-01-02T11:10:00.000+0000`) as ISO-8601 UTC; unparsable ones as given. */
function isoOf(stateTimestamp: string): string {
  const ms = Date.parse(stateTimestamp.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  return Number.isNaN(ms) ? stateTimestamp : new Date(ms).toISOString();
}

/**
 * ALARM -> OK: the alarm's latest incidents (`ALARM#<alarmArn>` / `LATEST`) get one
 * `alarm-cleared` notification each. Nothing is started, peeked or cancelled: a pending approval
 * stays open and the workflow re-reads ApproximateNumberOfMessages before any redrive
 * (`CheckDlqStillHasMessages`). The announcement is claimed on the pointer with a conditional
 * write, so a duplicate delivery sends nothing; a notifier that throws gives the claim back and
 * the error goes to Lambda's retry.
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html#alarm-evaluation
 */
async function alarmCleared(alarm: AlarmRecord, message: string, deps: TriageDeps): Promise<string[]> {
  const latest = await deps.incidents.getLatestAlarmIncidents(alarm.alarmArn);
  const extra = { alarmArn: alarm.alarmArn, dedupeKey: alarm.dedupeKey };
  if (!latest || latest.incidentIds.length === 0) {
    deps.log.info(`${message}: no incident of this alarm to annotate`, extra);
    return [];
  }
  if (isoOf(latest.stateTimestamp) >= isoOf(alarm.stateTimestamp)) {
    deps.log.info(`${message}: the latest incidents belong to a later ALARM transition; not annotated`, {
      ...extra,
      latest: latest.dedupeKey,
    });
    return [];
  }
  if (!(await deps.incidents.claimAlarmCleared(alarm.alarmArn, alarm.dedupeKey))) {
    deps.log.info(`${message}: alarm-cleared already announced`, { ...extra, latest: latest.dedupeKey });
    return [];
  }
  const clearedAt = isoOf(alarm.stateTimestamp);
  try {
    for (const incidentId of latest.incidentIds) {
      await deps.notifier?.notify({
        incidentId,
        kind: ALARM_CLEARED_KIND,
        text: `alarm cleared at ${clearedAt}: the pending approval stays open; the workflow re-checks the DLQ before any redrive`,
        fields: { alarmName: alarm.alarmName, clearedAt, alarmTransition: latest.stateTimestamp },
      });
    }
  } catch (error) {
    await deps.incidents.releaseAlarmCleared(alarm.alarmArn, alarm.dedupeKey).catch(() => undefined);
    throw error;
  }
  deps.log.info(`${message}: alarm-cleared sent`, { ...extra, incidentIds: latest.incidentIds });
  return latest.incidentIds;
}

interface Target {
  queueName: string;
  dlq: QueueInfo;
  registration: QueueRegistration;
  /** ListDeadLetterSourceQueues, when already read while resolving the target. */
  listedSources?: string[];
}

/** The ALARM_QUEUE_MAP entry of an alarm: own keys only (an alarm named `constructor` maps to nothing). */
function mappedQueues(map: Record<string, string[]>, key: string): string[] | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

/**
 * An alarm names a queue by name only; the lookup runs in the pipeline's Region. An alarm from
 * another Region (an SNS topic there can deliver here) or a queue that resolved in another account
 * would make triage inventory a different queue that happens to share the name: refuse it.
 * @throws InvalidInputError naming the alarm ARN field.
 */
function assertSameRegionAndAccount(alarm: AlarmRecord, queueName: string, dlqArn: string): void {
  const [, , , region = '', account = ''] = dlqArn.split(':');
  if (region === alarm.region && account === alarm.account) return;
  const field = alarm.via === 'sns' ? 'Records.0.Sns.Message.AlarmArn' : 'resources.0';
  throw new InvalidInputError(`alarm and queue ${queueName} are in different places`, [
    `${field}: alarm is in ${alarm.region} account ${alarm.account}, but queue ${queueName} resolved to ${dlqArn} (triage only handles alarms of the Region and account it looks queues up in)`,
  ]);
}

function sourceArnOfUrl(url: string, dlqArn: string): string {
  const [, partition = 'aws', , region = '', account = ''] = dlqArn.split(':');
  const parts = url.replace(/\/+$/, '').split('/');
  const owner = parts.at(-2) ?? account;
  return `arn:${partition}:sqs:${region}:${/^\d{12}$/.test(owner) ? owner : account}:${queueNameOfUrl(url)}`;
}

/**
 * Triage of one normalised alarm event.
 *
 * @throws QueueNotFoundError / AccessDeniedError before any write when a queue cannot be resolved.
 * @throws TransientError ('wrote 58/60 envelopes, 2 unprocessed') when envelopes are left
 *   unprocessed at the deadline; the transition is then not marked handled, so a retry completes it.
 */
export async function triage(event: NormalisedAlarmEvent, deps: TriageDeps): Promise<TriageResult> {
  if (event.kind === 'not-a-state-change') {
    deps.log.info('not a state change', { detailType: event.detailType });
    return { outcome: 'not-a-state-change', message: `not a state change: ${event.detailType}`, queues: [] };
  }
  const alarm = event.record;
  if (alarm.newState !== 'ALARM') {
    const message = `ignored transition ${alarm.previousState ?? '?'} -> ${alarm.newState}`;
    if (alarm.newState === 'OK' && alarm.previousState === 'ALARM') {
      const cleared = await alarmCleared(alarm, message, deps);
      return {
        outcome: 'ignored-transition',
        message,
        dedupeKey: alarm.dedupeKey,
        queues: [],
        alarmCleared: cleared,
      };
    }
    deps.log.info(message, { alarmArn: alarm.alarmArn, dedupeKey: alarm.dedupeKey });
    return { outcome: 'ignored-transition', message, dedupeKey: alarm.dedupeKey, queues: [] };
  }

  let queueNames: string[];
  let children: ChildOutcome[] | undefined;
  if (alarm.composite) {
    const composite = await compositeQueueNames(alarm, deps);
    if ('result' in composite) return composite.result;
    ({ queueNames, children } = composite);
  } else {
    queueNames =
      alarm.queueNames.length > 0
        ? alarm.queueNames
        : (mappedQueues(deps.config.alarmQueueMap, alarm.alarmName) ??
          mappedQueues(deps.config.alarmQueueMap, alarm.alarmArn) ??
          []);
    if (queueNames.length === 0) {
      const message = 'unresolvable alarm: no QueueName dimension';
      deps.log.warn(message, { alarmArn: alarm.alarmArn, dedupeKey: alarm.dedupeKey });
      await deps.notifier?.notify({
        incidentId: alarm.dedupeKey,
        kind: 'unresolvable-alarm',
        text: `${message}: alarm ${alarm.alarmName} names no DLQ (SEARCH or expression alarm); map it with ALARM_QUEUE_MAP`,
        fields: { alarmArn: alarm.alarmArn, stateTimestamp: alarm.stateTimestamp },
      });
      return { outcome: 'unresolvable', message, dedupeKey: alarm.dedupeKey, queues: [] };
    }
  }

  // Every lookup before the first write.
  const targets: Target[] = [];
  for (const queueName of queueNames) {
    const target = children
      ? await compositeTarget(alarm, queueName, children, deps)
      : await resolveTarget(alarm, queueName, deps);
    if (target) targets.push(target);
  }
  if (children && targets.length === 0) {
    const message = 'composite alarm: no triggering child leads to a DLQ in ALARM';
    return compositeUnresolved(alarm, message, children, deps);
  }

  const claim = await deps.incidents.claimTransition(
    {
      dedupeKey: alarm.dedupeKey,
      alarmArn: alarm.alarmArn,
      leaseExpiresAt: deps.now() + deps.remainingTimeMs() + (deps.config.leaseMarginMs ?? 5_000),
      ...(deps.requestId ? { owner: deps.requestId } : {}),
    },
    deps.now(),
  );
  if (!claim.claimed) {
    const message = 'duplicate alarm transition';
    deps.log.info(message, { dedupeKey: alarm.dedupeKey, via: alarm.via, status: claim.existing?.status });
    return { outcome: 'duplicate', message, dedupeKey: alarm.dedupeKey, queues: [] };
  }

  const outcomes: QueueOutcome[] = [];
  try {
    for (const target of targets) outcomes.push(await triageQueue(alarm, target, deps));
  } catch (error) {
    await deps.incidents
      .finishTransition(alarm.dedupeKey, 'FAILED', {
        incidentIds: outcomes.flatMap((o) => (o.incidentId ? [o.incidentId] : [])),
        outcome: errorMessage(error),
      })
      .catch(() => undefined);
    throw error;
  }
  const partial = outcomes.some((o) => o.outcome === 'partial');
  const message = outcomes.map((o) => `${o.queueName}: ${o.reason}`).join('; ');
  const incidentIds = outcomes.flatMap((o) => (o.incidentId ? [o.incidentId] : []));
  if (incidentIds.length > 0) {
    // Before HANDLED: a crash here leaves the transition FAILED/IN_PROGRESS, and the retry writes it.
    const latest = await deps.incidents.putLatestAlarmIncidents({
      alarmArn: alarm.alarmArn,
      dedupeKey: alarm.dedupeKey,
      stateTimestamp: alarm.stateTimestamp,
      incidentIds,
      updatedAt: new Date(deps.now()).toISOString(),
    });
    if (!latest.written)
      deps.log.info('a later ALARM transition already holds the latest incidents pointer', {
        dedupeKey: alarm.dedupeKey,
      });
  }
  await deps.incidents.finishTransition(alarm.dedupeKey, partial ? 'PARTIAL' : 'HANDLED', {
    incidentIds,
    outcome: message,
  });
  if (children) await reportSkippedChildren(alarm, children, deps);
  deps.log.info('alarm transition triaged', { dedupeKey: alarm.dedupeKey, outcomes: message });
  return {
    outcome: 'triaged',
    message,
    dedupeKey: alarm.dedupeKey,
    queues: outcomes,
    ...(children ? { children } : {}),
  };
}

async function resolveTarget(alarm: AlarmRecord, queueName: string, deps: TriageDeps): Promise<Target> {
  const dlq = await deps.queues.resolveByName(queueName, alarm.account);
  if (!dlq.arn) dlq.arn = queueArnOf(alarm.region, alarm.account, queueName);
  assertSameRegionAndAccount(alarm, queueName, dlq.arn);
  return { queueName, dlq, registration: await deps.registry.getRegistration(dlq.arn) };
}

/** Marks the children that led to `queueName` with why its DLQ is not triaged. */
function skipQueue(
  children: ChildOutcome[],
  queueName: string,
  outcome: ChildOutcome['outcome'],
  reason: string,
): void {
  for (const child of children) {
    if (child.outcome !== 'triaged' || !child.queueNames?.includes(queueName)) continue;
    const left = child.queueNames.filter((q) => q !== queueName);
    if (left.length === 0) Object.assign(child, { outcome, reason: `${queueName} ${reason}` });
    else Object.assign(child, { queueNames: left, reason: `${child.reason}; ${queueName} ${reason}` });
  }
}

/**
 * A composite child's queue becomes a target only if it exists and is a DLQ: a registered DLQ or
 * the dead-letter target of some queue (ListDeadLetterSourceQueues). A depth alarm on a source
 * queue's backlog in the same composite is reported, not inventoried. One stale child does not
 * stop the others: a missing queue is reported on its child.
 */
async function compositeTarget(
  alarm: AlarmRecord,
  queueName: string,
  children: ChildOutcome[],
  deps: TriageDeps,
): Promise<Target | undefined> {
  let target: Target;
  try {
    target = await resolveTarget(alarm, queueName, deps);
  } catch (error) {
    if (!(error instanceof QueueNotFoundError)) throw error;
    skipQueue(children, queueName, 'queue-not-found', 'does not exist');
    return undefined;
  }
  const registered = (await deps.registry.findRegistration?.(target.dlq.arn)) ?? null;
  const sources = registered ? undefined : await deps.queues.listDeadLetterSourceQueues(target.dlq.url);
  if (!registered && sources?.length === 0) {
    skipQueue(
      children,
      queueName,
      'not-a-dlq',
      "is no queue's dead-letter queue and is not registered: not inventoried",
    );
    return undefined;
  }
  return { ...target, ...(sources ? { listedSources: sources } : {}) };
}

/**
 * A composite alarm in ALARM: its actions suppressed (nothing to do), its children unreadable
 * (nothing peeked; a person is told), or the queue names of its triggering DLQ children.
 */
async function compositeQueueNames(
  alarm: AlarmRecord,
  deps: TriageDeps,
): Promise<{ result: TriageResult } | { queueNames: string[]; children: ChildOutcome[] }> {
  const composite = alarm.composite as NonNullable<AlarmRecord['composite']>;
  if (composite.actionsSuppressedBy) {
    const message = `composite alarm actions suppressed by ${composite.actionsSuppressedBy}${composite.actionsSuppressedReason ? ` (${composite.actionsSuppressedReason})` : ''}: not triaged`;
    deps.log.info(message, { alarmArn: alarm.alarmArn, dedupeKey: alarm.dedupeKey });
    return { result: { outcome: 'suppressed', message, dedupeKey: alarm.dedupeKey, queues: [] } };
  }
  const resolution = await resolveCompositeChildren(composite, deps.alarms);
  if (!resolution.readable)
    return {
      result: await compositeUnresolved(
        alarm,
        `unresolvable composite alarm: ${resolution.reason}`,
        resolution.children,
        deps,
      ),
    };
  if (resolution.queueNames.length === 0)
    return {
      result: await compositeUnresolved(
        alarm,
        'composite alarm: no triggering child is a DLQ alarm in ALARM',
        resolution.children,
        deps,
      ),
    };
  return { queueNames: resolution.queueNames, children: resolution.children };
}

function childLines(children: ChildOutcome[]): string {
  return children
    .filter((c) => c.outcome !== 'triaged')
    .map((c) => `${c.alarmName}: ${c.outcome} (${c.reason})`)
    .join('; ');
}

/** Nothing to triage for a composite alarm: one log line, one notification, nothing peeked. */
async function compositeUnresolved(
  alarm: AlarmRecord,
  message: string,
  children: ChildOutcome[],
  deps: TriageDeps,
): Promise<TriageResult> {
  deps.log.warn(message, { alarmArn: alarm.alarmArn, dedupeKey: alarm.dedupeKey, children });
  const lines = childLines(children);
  await deps.notifier?.notify({
    incidentId: alarm.dedupeKey,
    kind: 'unresolvable-alarm',
    text: `${message}: composite alarm ${alarm.alarmName}${lines ? `; ${lines}` : ''}`,
    fields: { alarmArn: alarm.alarmArn, stateTimestamp: alarm.stateTimestamp, children: children.length },
  });
  return { outcome: 'unresolvable', message, dedupeKey: alarm.dedupeKey, queues: [], children };
}

/** The children of a triaged composite that were not followed: told once (after the claim). */
async function reportSkippedChildren(
  alarm: AlarmRecord,
  children: ChildOutcome[],
  deps: TriageDeps,
): Promise<void> {
  const lines = childLines(children);
  if (!lines) return;
  deps.log.warn('composite alarm children not triaged', { alarmArn: alarm.alarmArn, children });
  await deps.notifier?.notify({
    incidentId: alarm.dedupeKey,
    kind: 'composite-children-skipped',
    text: `composite alarm ${alarm.alarmName}: triggering children not triaged: ${lines}`,
    fields: { alarmArn: alarm.alarmArn, stateTimestamp: alarm.stateTimestamp },
  });
}

async function triageQueue(alarm: AlarmRecord, target: Target, deps: TriageDeps): Promise<QueueOutcome> {
  const { dlq, registration, queueName } = target;
  const base = { queueName, dlqArn: dlq.arn };
  const refusal = inventoryRefusal(dlq, registration);
  if (refusal) {
    deps.log.warn('inventory refused', { dlqArn: dlq.arn, reason: refusal });
    await deps.notifier?.notify({
      incidentId: incidentIdOf(alarm.alarmArn, alarm.stateTimestamp, dlq.arn),
      kind: 'refused',
      text: `triage refused: ${refusal}`,
      fields: { dlqArn: dlq.arn, alarmArn: alarm.alarmArn },
    });
    return { ...base, outcome: 'refused', reason: refusal };
  }
  const incidentId = incidentIdOf(alarm.alarmArn, alarm.stateTimestamp, dlq.arn);
  const now0 = deps.now();
  const lease = await deps.incidents.claimInventory(
    {
      dlqArn: dlq.arn,
      owner: alarm.dedupeKey,
      leaseExpiresAt: now0 + deps.remainingTimeMs() + (deps.config.leaseMarginMs ?? 5_000),
    },
    now0,
  );
  if (!lease.claimed) {
    const reason = `another alarm transition (${lease.holder ?? 'unknown'}) is inventorying this DLQ now; its incident covers these messages`;
    deps.log.info('DLQ inventory busy', {
      dlqArn: dlq.arn,
      holder: lease.holder,
      dedupeKey: alarm.dedupeKey,
    });
    return { ...base, outcome: 'busy', reason };
  }
  // An inventory that goes on in the workflow keeps the lease: its last step releases it.
  let handedOver = false;
  try {
    const outcome = dlq.fifo
      ? await inventoryAndOpen(alarm, target, incidentId, deps)
      : await inventoryOnTheEngine(alarm, target, incidentId, deps);
    handedOver = outcome.outcome === 'continuing';
    return outcome;
  } catch (error) {
    if (!(error instanceof KmsKeyError) || error.retryable) throw error;
    return kmsRefusal(alarm, target, incidentId, error, deps);
  } finally {
    if (!handedOver) await deps.incidents.releaseInventory(dlq.arn, alarm.dedupeKey).catch(() => undefined);
  }
}

/**
 * SQS could not use the DLQ's KMS key for triage's receive (disabled, pending deletion, gone, or
 * the role may not use it): the DLQ is not inventoried, and a person is told exactly that (which
 * queue, which key, which action, SQS's error), instead of an internal error with SDK text.
 * Messages the receive did get are released by the inventory's `finally`.
 */
async function kmsRefusal(
  alarm: AlarmRecord,
  target: Target,
  incidentId: string,
  error: KmsKeyError,
  deps: TriageDeps,
): Promise<QueueOutcome> {
  const key = target.dlq.attributes.KmsMasterKeyId ?? '(key not readable)';
  const reason = `DLQ ${target.dlq.name} is encrypted with KMS key ${key}, which SQS cannot use for triage's ${error.kmsAction}: ${error.sqsError}; nothing was inventoried (fix the key or its policy, then the next alarm transition triages)`;
  deps.log.warn('KMS key unusable', { dlqArn: target.dlq.arn, key, sqsError: error.sqsError });
  await deps.notifier?.notify({
    incidentId,
    kind: 'kms-key-unusable',
    text: reason,
    fields: {
      dlqArn: target.dlq.arn,
      kmsKey: key,
      kmsAction: error.kmsAction,
      sqsError: error.sqsError,
      alarmArn: alarm.alarmArn,
    },
  });
  return { queueName: target.queueName, dlqArn: target.dlq.arn, outcome: 'refused', reason };
}

/**
 * A standard DLQ: the first step of an inventory session (`inventory-session.ts`). Complete
 * within this invocation: the incident is opened and the workflow started, as for any DLQ. Stopped
 * on its message budget or the Lambda's time: the messages seen so far stay held, the incident is
 * opened with the summary so far (partial), and the workflow starts with `inventoryId`: its
 * `ContinueInventory` loop finishes the inventory before anyone is asked to approve (a sample,
 * too, carries `inventoryId`, so the workflow knows). The input depends only on the session's
 * state, so a retried triage sends byte-identical input.
 */
async function inventoryOnTheEngine(
  alarm: AlarmRecord,
  target: Target,
  incidentId: string,
  deps: TriageDeps,
): Promise<QueueOutcome> {
  const { dlq, registration, queueName } = target;
  const base = { queueName, dlqArn: dlq.arn };
  const listedSources = target.listedSources ?? (await deps.queues.listDeadLetterSourceQueues(dlq.url));
  const step = await inventoryStep(
    {
      dlq,
      registration,
      incidentId,
      leaseOwner: alarm.dedupeKey,
      budgets: deps.config.budgets,
      holdLimit: deps.config.budgets.pageBudget,
    },
    {
      queues: deps.queues,
      envelopes: deps.envelopes,
      sessions: deps.sessions,
      remainingTimeMs: deps.remainingTimeMs,
      now: deps.now,
    },
  );
  const { session } = step;
  for (const warning of step.run?.warnings ?? []) deps.log.warn(warning, { dlqArn: dlq.arn, incidentId });
  if (step.status === 'complete' && session.inventoried === 0)
    return { ...base, outcome: 'empty', reason: 'the DLQ was empty at inventory time: nothing to triage' };
  const continuing = step.status === 'running';
  if (continuing) {
    // The lease covers the messages held until the next step extends it.
    const now = deps.now();
    await deps.incidents.claimInventory(
      { dlqArn: dlq.arn, owner: alarm.dedupeKey, leaseExpiresAt: session.holdUntil + HANDOVER_MARGIN_MS },
      now,
    );
  }
  const result = summaryOfSession(session, deps.now());
  // The workflow runs the inventory loop when there is more to inventory, and for a sample (its
  // `$.inventory` then keeps the bulk move from carrying messages without an envelope).
  const outcome = await openIncidentAndStart(alarm, target, incidentId, listedSources, result, deps, {
    ...(continuing || session.sampled ? { inventoryId: session.inventoryId } : {}),
    status: continuing ? 'continuing' : 'triaged',
    written: session.inventoried,
  });
  if (continuing) {
    outcome.reason = `inventory continues in the workflow: ${session.inventoried} of about ${session.depthAtStart} messages so far (${session.stopReason}), held invisible until ${new Date(session.holdUntil).toISOString()}; approval once it is complete`;
    // A big incident takes a while to reach the approval: say so, once, when it is handed over.
    await deps.notifier?.notify({
      incidentId,
      kind: 'partial-inventory',
      text: `${dlq.name}: ${outcome.reason}`,
      fields: {
        dlqArn: dlq.arn,
        stopReason: session.stopReason,
        seen: session.inventoried,
        depthAtStart: session.depthAtStart,
        executionArn: outcome.executionArn ?? null,
      },
    });
  }
  return outcome;
}

/**
 * Opens (or updates) the incident with its summary and, when `announceSystemic`, tells people
 * about a systemic failure (an inventory that goes on announces it when it is complete).
 */
async function openIncident(
  alarm: AlarmRecord,
  target: Target,
  incidentId: string,
  listedSources: readonly string[],
  { summary, incidentClassification }: SummaryResult,
  deps: TriageDeps,
  options: { status: Incident['status']; announceSystemic: boolean },
): Promise<{ summary: IncidentSummary; sourceArns: string[] }> {
  const { dlq } = target;
  const iso = new Date(deps.now()).toISOString();
  const sourceArns = [
    ...new Set([
      ...listedSources.map((url) => sourceArnOfUrl(url, dlq.arn)),
      ...Object.keys(summary.countBySource).filter((s) => s !== 'unknown'),
    ]),
  ].sort();
  const incident: Incident = {
    incidentId,
    dlqArn: dlq.arn,
    dlqUrl: dlq.url,
    alarmArn: alarm.alarmArn,
    alarmName: alarm.alarmName,
    dedupeKey: alarm.dedupeKey,
    stateTimestamp: alarm.stateTimestamp,
    sourceArns,
    status: options.status,
    summary,
    createdAt: iso,
    updatedAt: iso,
  };
  const { created } = await deps.incidents.putIncident(incident);
  if (!created)
    await deps.incidents.updateIncident(incidentId, {
      summary,
      sourceArns,
      status: options.status,
      updatedAt: iso,
    });
  if (incidentClassification && options.announceSystemic) {
    deps.log.warn('systemic failure', { incidentId, reason: incidentClassification.reason });
    await deps.notifier?.notify({
      incidentId,
      kind: 'systemic',
      text: `${dlq.name}: ${incidentClassification.reason} (${summary.messageCount} messages, ${summary.causes[0]?.errorClass ?? '<none>'})`,
      fields: { dlqArn: dlq.arn, messages: summary.messageCount },
    });
  }
  return { summary, sourceArns };
}

/**
 * The execution input triage starts a workflow with: ids only, whatever the DLQ's depth (the
 * inventory's state is in DynamoDB, under `inventoryId`), so it stays far under Step Functions'
 * 256 KiB payload limit. No random or time fields: a retried triage sends byte-identical input
 *.
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html
 */
export function workflowInputOf(
  dlqArn: string,
  incidentId: string,
  inventoryId: string | undefined,
): Record<string, unknown> {
  return { dlqArn, incidentId, requestedBy: 'triage', ...(inventoryId ? { inventoryId } : {}) };
}

/**
 * Opens the incident and starts its workflow; `inventoryId` is in the input of a workflow whose
 * inventory is a session (its `ContinueInventory` loop runs until the session is complete).
 */
async function openIncidentAndStart(
  alarm: AlarmRecord,
  target: Target,
  incidentId: string,
  listedSources: readonly string[],
  summarised: SummaryResult,
  deps: TriageDeps,
  options: {
    inventoryId?: string;
    status: 'triaged' | 'continuing';
    written: number;
    /** After "N messages inventoried" in the reason: what the inventory did not see. */
    seen?: string;
  },
): Promise<QueueOutcome> {
  const { dlq, queueName } = target;
  const { summary, sourceArns } = await openIncident(
    alarm,
    target,
    incidentId,
    listedSources,
    summarised,
    deps,
    {
      status: 'OPEN',
      announceSystemic: options.status === 'triaged',
    },
  );
  const started = await deps.workflow.startWorkflow({
    incidentId,
    input: workflowInputOf(dlq.arn, incidentId, options.inventoryId),
  });
  if (started.alreadyStarted)
    deps.log.info('duplicate workflow start', { incidentId, executionArn: started.executionArn });
  await deps.incidents.updateIncident(incidentId, {
    status: 'WORKFLOW_STARTED',
    executionArn: started.executionArn,
  });
  return {
    queueName,
    dlqArn: dlq.arn,
    outcome: options.status,
    reason: `${summary.messageCount} messages inventoried${options.seen ?? ''}, incident ${incidentId}, workflow ${started.alreadyStarted ? 'already started' : 'started'}`,
    incidentId,
    summary,
    sourceArns,
    written: options.written,
    executionArn: started.executionArn,
    workflowAlreadyStarted: started.alreadyStarted,
  };
}

/**
 * A FIFO DLQ: one inventory run that holds what it receives and releases it at the end. SQS
 * returns no later message of a group while earlier ones are in flight, so holding across
 * invocations would not show more of it; a run that stops early stores a cursor and says so.
 */
async function inventoryAndOpen(
  alarm: AlarmRecord,
  target: Target,
  incidentId: string,
  deps: TriageDeps,
): Promise<QueueOutcome> {
  const { dlq, registration, queueName } = target;
  const base = { queueName, dlqArn: dlq.arn };
  const listedSources = target.listedSources ?? (await deps.queues.listDeadLetterSourceQueues(dlq.url));
  const inventory = await inventoryDlq(
    { dlq, registration, incidentId, budgets: deps.config.budgets },
    { queues: deps.queues, envelopes: deps.envelopes, remainingTimeMs: deps.remainingTimeMs, now: deps.now },
  );
  for (const warning of inventory.warnings) deps.log.warn(warning, { dlqArn: dlq.arn, incidentId });
  if (inventory.unprocessed > 0) {
    const total = inventory.written + inventory.unprocessed;
    throw new TransientError(
      `${queueName}: wrote ${inventory.written}/${total} envelopes, ${inventory.unprocessed} unprocessed`,
    );
  }
  const now = deps.now();
  const iso = new Date(now).toISOString();
  const saveCursor = async () => {
    const previous = await deps.envelopes.getCursor(dlq.arn);
    await deps.envelopes.putCursor({
      dlqArn: dlq.arn,
      incidentId,
      dedupeKey: alarm.dedupeKey,
      runs: (previous?.runs ?? 0) + 1,
      inventoried: (previous?.inventoried ?? 0) + inventory.created,
      reason: inventory.stopReason,
      updatedAt: iso,
    });
    const reason = `partial inventory (${inventory.stopReason}): ${inventory.envelopes.length} messages seen, cursor stored; no workflow until the inventory is complete`;
    // Without this a DLQ too deep for one run would stay untriaged with only a log line to show.
    await deps.notifier?.notify({
      incidentId,
      kind: 'partial-inventory',
      text: `${dlq.name}: ${reason} (run ${(previous?.runs ?? 0) + 1}; the next alarm transition continues it)`,
      fields: { dlqArn: dlq.arn, stopReason: inventory.stopReason, seen: inventory.envelopes.length },
    });
    return reason;
  };
  if (inventory.envelopes.length === 0) {
    if (inventory.partial) return { ...base, outcome: 'partial', reason: await saveCursor() };
    await deps.envelopes.clearCursor(dlq.arn);
    return { ...base, outcome: 'empty', reason: 'the DLQ was empty at inventory time: nothing to triage' };
  }
  // A FIFO DLQ whose groups are deeper than a scan can see (`fifo-groups-blocked`) still gets its
  // workflow: no later run would see more, and the recording mover inventories the rest of each
  // group as it reaches it, in order (docs/redrive-workflow.md, "Deep FIFO groups").
  const waitsForInventory = inventory.partial && inventory.stopReason !== 'fifo-groups-blocked';
  const summarised = summarise(inventory.envelopes, { now, partial: inventory.partial });
  if (waitsForInventory) {
    const { summary, sourceArns } = await openIncident(
      alarm,
      target,
      incidentId,
      listedSources,
      summarised,
      deps,
      {
        status: 'PARTIAL',
        announceSystemic: true,
      },
    );
    return {
      ...base,
      outcome: 'partial',
      reason: await saveCursor(),
      incidentId,
      summary,
      sourceArns,
      written: inventory.written,
    };
  }
  await deps.envelopes.clearCursor(dlq.arn);
  return openIncidentAndStart(alarm, target, incidentId, listedSources, summarised, deps, {
    status: 'triaged',
    written: inventory.written,
    ...(inventory.partial
      ? {
          seen: ` of ${dlq.visible} (FIFO: the rest wait behind their message group's first messages; the recording mover inventories them in order)`,
        }
      : {}),
  });
}
