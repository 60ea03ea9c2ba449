/**
 * The on-call report: the answers a person paged for a DLQ needs first, built once from the
 * incident (triage's summary plus what the workflow recorded on it) and its audit trail, and shown
 * the same way everywhere: the terminal approval prompt, `npm start`'s final report and its
 * `--json`, Slack, and `dlq show`.
 *
 * - what failed: the top causes with counts and one example each;
 * - how many: messages, by source queue and by classification;
 * - since when: the oldest message's SentTimestamp (UTC clock time, age beside it);
 * - when the first message expires: the earliest retention deadline and the time left;
 * - what the redrive did: the last run's outcome and counts;
 * - the warnings, in full (never cut);
 * - the audit trail: who asked, approved, rejected, cancelled, and how each run ended.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 */

import type { CauseGroup, Classification, IncidentSummary } from '#inventory/model.js';
import { EXPIRY_WARNING_MS } from '#inventory/retention.js';
import { clockText, formatDuration, isoUtc } from '#platform/clock-text.js';
import { type ExposureBasis, exposureBoundOf } from '#platform/reasons.js';
import { exposureBoundText } from '#platform/reasons-text.js';
import type { AuditEntry } from './audit-trail.js';
import type { Incident } from './incident-store.js';

/** Causes the report lists; the rest are counted in `moreCauses`. */
export const TOP_CAUSES = 5;

/** A time in a report: epoch milliseconds and ISO-8601 UTC. */
export interface ReportTime {
  atMs: number;
  at: string;
}

/** What the last run recorded on the incident (Notify and Reconcile write these fields). */
export interface RedriveReport {
  outcome: string | null;
  text: string | null;
  inventoried: number | null;
  redriven: number | null;
  parked: number | null;
  discarded: number | null;
  inDlq: number | null;
  /** Envelopes whose message the DLQ still held invisible at the end. */
  inFlight: number | null;
  /** Envelopes gone without evidence (`missing`; older records call it `lost`). */
  missing: number | null;
  /** Messages first seen after triage (no copy of a redriven key), counted on the left of the balance. */
  lateArrivals: number | null;
  /**
   * Copies of messages this incident redrove that came back to the DLQ: each has its own envelope,
   * counted in `inDlq` (or parked), so the balance is
   * `inventoried + lateArrivals + returned = redriven + parked + discarded + inDlq + inFlight + missing`.
   */
  returned: number | null;
  /**
   * Of `redriven`: left the DLQ outside the pipeline (by hand, another tool) and processed by a
   * consumer after they were last seen there (Reconcile's evidence), so not missing.
   */
  redrivenOutside: number | null;
  balanced: boolean | null;
  /** At most this many moved messages could reach a consumer that broke during the ramp (null: no ramp). */
  exposureBound: number | null;
  /** How `exposureBound` was computed: the rates in force over the return window. */
  exposureBasis: ExposureBasis | null;
}

/** The on-call report of one incident. Durations are milliseconds. */
export interface OnCallReport {
  incidentId: string;
  dlqArn: string;
  /** The DLQ's name. */
  queue: string;
  status: string;
  openedAt: ReportTime | null;
  /** Messages inventoried by triage. */
  messages: number;
  /** True when triage's inventory did not see the whole DLQ. */
  partial: boolean;
  countBySource: Record<string, number>;
  countByClassification: Record<Classification, number> | Record<string, number>;
  topCauses: CauseGroup[];
  /** Causes not listed in `topCauses`. */
  moreCauses: number;
  /** The oldest message: when it was sent, and its age now. */
  oldestMessage: (ReportTime & { ageMs: number }) | null;
  /** The earliest retention deadline and the time left (negative: passed). */
  firstRetentionDeadline: (ReportTime & { leftMs: number }) | null;
  expiringWithin24h: number;
  redrive: RedriveReport | null;
  warnings: string[];
  audit: AuditEntry[];
}

const time = (ms: number): ReportTime => ({ atMs: ms, at: isoUtc(ms) });
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The queue name at the end of an SQS ARN. */
export function queueNameOf(arn: string): string {
  return arn.split(':').pop() ?? arn;
}

/** What a summary warning is about (preflight covers some of the same ground once a run has started). */
export type SummaryWarningTopic = 'retention' | 'fifo' | 'do-not-redrive' | 'no-source' | 'systemic';

/**
 * The warnings that follow from an incident summary alone, in the words the approval request
 * uses (retention, FIFO ordering, poison parked first or discarded, messages without
 * a source, systemic failures), each with its topic. Preflight's warnings come on top, from the run.
 *
 * @param options.nowMs - now, epoch milliseconds.
 * @param options.discardPoison - the plan deletes poison instead of parking it.
 * @param options.fifo - the DLQ is a FIFO queue.
 */
export function summaryWarningList(
  summary: IncidentSummary,
  options: { nowMs: number; discardPoison?: boolean; fifo?: boolean },
): Array<{ topic: SummaryWarningTopic; text: string }> {
  const out: Array<{ topic: SummaryWarningTopic; text: string }> = [];
  const deadline = summary.earliestRetentionDeadline;
  if (deadline !== null && deadline - options.nowMs < EXPIRY_WARNING_MS) {
    const expiring = summary.expiringWithin24h;
    out.push({
      topic: 'retention',
      text:
        `< 24 h of retention left: the earliest message expires at ${isoUtc(deadline)} (in ${formatDuration(deadline - options.nowMs)})` +
        (expiring
          ? `; ${plural(expiring, 'message')} ${expiring === 1 ? 'expires' : 'expire'} within 24 h`
          : ''),
    });
  }
  if (options.fifo)
    out.push({
      topic: 'fifo',
      text: 'FIFO: ordering within a message group is not preserved relative to new traffic (redriven messages interleave with new messages)',
    });
  const byClass = summary.countByClassification;
  const doNotRedrive = (byClass.poison ?? 0) + (byClass.permanent ?? 0);
  if (doNotRedrive > 0)
    out.push({
      topic: 'do-not-redrive',
      text: options.discardPoison
        ? `${plural(doNotRedrive, 'poison/permanent message')} will be DISCARDED first (discardPoison is set)`
        : `${plural(doNotRedrive, 'poison/permanent message')} will be parked first (a move task cannot skip messages)`,
    });
  const unknownSource = summary.countBySource.unknown ?? 0;
  if (unknownSource > 0)
    out.push({
      topic: 'no-source',
      text: `${plural(unknownSource, 'message')} ${unknownSource === 1 ? 'has' : 'have'} no DeadLetterQueueSourceArn (sent straight to the DLQ)`,
    });
  if ((byClass.systemic ?? 0) > 0)
    out.push({
      topic: 'systemic',
      text: 'systemic failures found: fix the cause (credentials, endpoint, deploy) before redriving',
    });
  return out;
}

/**
 * The summary's warnings that preflight's warnings of the same run do not already cover: the
 * generic FIFO one is left out when preflight said what this run does with group order (its
 * warnings that start `FIFO:`: order kept by the recording mover, or not kept by a move task).
 */
export function summaryWarningsBeside(
  preflightWarnings: readonly string[],
  summary: IncidentSummary,
  options: { nowMs: number; discardPoison?: boolean; fifo?: boolean },
): string[] {
  const saysFifo = preflightWarnings.some((w) => w.startsWith('FIFO:'));
  return summaryWarningList(summary, options)
    .filter((w) => !(saysFifo && w.topic === 'fifo'))
    .map((w) => w.text);
}

/** Topics whose summary warning preflight's own (exact) warning replaces once a run recorded them. */
const COVERED_BY_PREFLIGHT = new Set<SummaryWarningTopic>(['fifo', 'do-not-redrive', 'no-source']);

/** The oldest message's send time: stored, else derived from its age at inventory time. */
function oldestSentAt(incident: Incident): number | null {
  const s = incident.summary;
  if (typeof s.oldestSentAt === 'number') return s.oldestSentAt;
  if (s.oldestMessageAgeMs === null) return null;
  const inventoriedAt = Date.parse(incident.createdAt);
  return Number.isNaN(inventoriedAt) ? null : inventoriedAt - s.oldestMessageAgeMs;
}

function redriveOf(record: Record<string, unknown>): RedriveReport | null {
  const reconcile = (record.reconcile ?? null) as Record<string, unknown> | null;
  const outcome = typeof record.outcome === 'string' ? record.outcome : null;
  if (!reconcile && !outcome) return null;
  const r = reconcile ?? {};
  return {
    outcome,
    text: typeof record.outcomeText === 'string' ? record.outcomeText : null,
    inventoried: num(r.inventoried),
    redriven: num(r.redriven),
    parked: num(r.parked),
    discarded: num(r.discarded),
    inDlq: num(r.inDlq),
    inFlight: num(r.inFlight),
    missing: num(r.missing) ?? num(r.lost),
    lateArrivals: num(r.lateArrivals),
    returned: num(r.returned),
    redrivenOutside: num(r.redrivenOutside),
    balanced: typeof r.balanced === 'boolean' ? r.balanced : null,
    ...exposureOf(record),
  };
}

/** The run's exposure bound: recorded by Notify, else the ramp's own (a run still going). */
function exposureOf(record: Record<string, unknown>): Pick<RedriveReport, 'exposureBound' | 'exposureBasis'> {
  if (
    typeof record.exposureBound === 'number' &&
    typeof record.exposureBasis === 'object' &&
    record.exposureBasis
  )
    return { exposureBound: record.exposureBound, exposureBasis: record.exposureBasis as ExposureBasis };
  const fromRamp = exposureBoundOf(record.ramp);
  return { exposureBound: fromRamp?.bound ?? null, exposureBasis: fromRamp?.basis ?? null };
}

/**
 * Builds the on-call report of an incident.
 *
 * @param incident - the incident item as read (extra fields the workflow recorded included:
 *   `outcome`, `outcomeText`, `reconcile`, `warnings`).
 * @param audit - the incident's audit trail, oldest first.
 * @param nowMs - now, epoch milliseconds (ages, time left).
 */
export function buildOnCallReport(
  incident: Incident,
  audit: readonly AuditEntry[],
  nowMs: number,
): OnCallReport {
  const s = incident.summary;
  const record = incident as unknown as Record<string, unknown>;
  const causes = [...s.causes].sort((a, b) => b.count - a.count);
  const sent = oldestSentAt(incident);
  const deadline = s.earliestRetentionDeadline;
  const fifo = incident.dlqArn.endsWith('.fifo');
  const recorded = Array.isArray(record.warnings) ? record.warnings.filter((w) => typeof w === 'string') : [];
  const warnings = [...recorded];
  for (const w of summaryWarningList(s, { nowMs, fifo })) {
    if (recorded.length > 0 && COVERED_BY_PREFLIGHT.has(w.topic)) continue;
    if (!warnings.includes(w.text)) warnings.push(w.text);
  }
  const opened = Date.parse(incident.createdAt);
  return {
    incidentId: incident.incidentId,
    dlqArn: incident.dlqArn,
    queue: queueNameOf(incident.dlqArn),
    status: incident.status,
    openedAt: Number.isNaN(opened) ? null : time(opened),
    messages: s.messageCount,
    partial: s.partial,
    countBySource: s.countBySource,
    countByClassification: s.countByClassification,
    topCauses: causes.slice(0, TOP_CAUSES),
    moreCauses: Math.max(0, causes.length - TOP_CAUSES),
    oldestMessage: sent === null ? null : { ...time(sent), ageMs: Math.max(0, nowMs - sent) },
    firstRetentionDeadline: deadline === null ? null : { ...time(deadline), leftMs: deadline - nowMs },
    expiringWithin24h: s.expiringWithin24h,
    redrive: redriveOf(record),
    warnings,
    audit: [...audit],
  };
}

/** One line per audit entry: clock time, what happened, who, how. */
export function auditLine(entry: AuditEntry, nowMs: number): string {
  const who = entry.by ? ` by ${entry.by}` : '';
  const run = entry.executionName ? ` (execution ${entry.executionName})` : '';
  const plan = entry.plan
    ? `; plan ${entry.plan.mode}, sample ${entry.plan.sampleSize}, ${entry.plan.rampRates.join(' -> ')} msg/s, ${entry.plan.dwellSeconds} s per step${entry.plan.destinationArn ? `, to ${queueNameOf(entry.plan.destinationArn)}` : ''}${entry.plan.discardPoison ? ', discard poison' : ''}`
    : '';
  const outcome = entry.outcome ? `: ${entry.outcome}` : '';
  const text = entry.text ? ` - ${entry.text}` : '';
  return `${clockText(entry.at, nowMs)}  ${entry.kind}${outcome}${who} via ${entry.via}${run}${plan}${text}`;
}

/** The cause line: count, error class, classification, an example id and its reason. */
export function causeLine(c: CauseGroup): string {
  return `${c.count} x ${c.errorClass} (${c.classification}): e.g. ${c.exampleMessageId}: ${c.exampleReason}`;
}

/**
 * The report as labelled lines for a terminal (the approval prompt, `npm start`, `dlq show`).
 * Nothing is cut: warnings and causes are printed in full.
 */
export function onCallReportLines(report: OnCallReport, nowMs: number): string[] {
  const lines: string[] = [];
  const sources = Object.entries(report.countBySource)
    .sort(([, a], [, b]) => b - a)
    .map(([arn, n]) => `${n} from ${arn === 'unknown' ? 'an unknown source' : queueNameOf(arn)}`);
  const classes = Object.entries(report.countByClassification)
    .filter(([, n]) => n > 0)
    .map(([c, n]) => `${c} ${n}`);
  lines.push(
    `what failed:    ${report.topCauses.length === 0 ? 'no failure reason recorded' : plural(report.topCauses.length + report.moreCauses, 'cause')}`,
  );
  for (const c of report.topCauses) lines.push(`  ${causeLine(c)}`);
  if (report.moreCauses > 0) lines.push(`  ...and ${plural(report.moreCauses, 'more cause')}`);
  lines.push(
    `how many:       ${plural(report.messages, 'message')}${report.partial ? ' (inventory partial)' : ''}${sources.length > 0 ? `: ${sources.join(', ')}` : ''}`,
  );
  if (classes.length > 0) lines.push(`classification: ${classes.join(', ')}`);
  lines.push(
    `since when:     ${report.oldestMessage ? `oldest message sent ${clockText(report.oldestMessage.atMs, nowMs)}` : 'unknown'}`,
  );
  const d = report.firstRetentionDeadline;
  lines.push(
    `first expiry:   ${d ? `${clockText(d.atMs, nowMs)}${d.leftMs < EXPIRY_WARNING_MS ? ' (< 24 h!)' : ''}${report.dlqArn.endsWith('.fifo') ? ', approximate for FIFO' : ''}; ${plural(report.expiringWithin24h, 'message')} within 24 h` : 'none'}`,
  );
  const r = report.redrive;
  if (r) {
    const counts = [
      ['inventoried', r.inventoried],
      ['late arrivals', r.lateArrivals || null],
      ['returned copies', r.returned || null],
      ['redriven', r.redriven],
      ['of them redriven outside the pipeline', r.redrivenOutside || null],
      ['parked', r.parked],
      ['discarded', r.discarded],
      ['still in DLQ', r.inDlq],
      ['in flight', r.inFlight || null],
      ['missing', r.missing],
    ]
      .filter(([, v]) => v !== null)
      .map(([k, v]) => `${v} ${k}`);
    lines.push(
      `redrive:        ${r.outcome ?? 'running'}${counts.length > 0 ? `: ${counts.join(', ')}` : ''}`,
    );
    if (r.text) lines.push(`  ${r.text}`);
    if (r.exposureBound !== null && r.exposureBasis !== null)
      lines.push(`exposure bound: ${exposureBoundText({ bound: r.exposureBound, basis: r.exposureBasis })}`);
  } else lines.push('redrive:        none yet');
  lines.push(`warnings:       ${report.warnings.length === 0 ? 'none' : report.warnings.length}`);
  for (const w of report.warnings) lines.push(`  ! ${w}`);
  return lines;
}

/**
 * How long a ramp step lasts, for the plan an approver reads: the plan's dwell, and, when the
 * return window (Preflight's verification window) is longer, that window, which a move task's step
 * waits at least before its first check (the step's first messages must have had the time to fail
 * and come back; forecastRun in transfer/redrive-plan.ts and the move task size steps the same way).
 */
export function stepSecondsText(dwellSeconds: number, verifyWindowSeconds?: number): string {
  const window = Math.ceil(verifyWindowSeconds ?? 0);
  return window > dwellSeconds
    ? `${window} s per step (the plan's ${dwellSeconds} s dwell, at least one ${window} s return window: a step's first check waits for its first messages to come back)`
    : `${dwellSeconds} s per step`;
}
