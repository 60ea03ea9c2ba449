/**
 * The end-of-run report of `npm start` (every scenario): where every inventoried message ended,
 * how many messages the redrive exposed to a failing consumer against the bound that applied, and
 * whether the run ended as its scenario expects. As a table, or as one JSON object (`--json`).
 */

import { type OnCallReport, onCallReportLines } from '#incident/on-call-report.js';
import { clockText } from '#platform/clock-text.js';
import type { RampReason } from '#platform/reasons.js';
import type { ReconcileResult } from '../../functions/reconcile/reconcile.js';

/** Counts from the workflow's Reconcile step (`$.reconcile`, docs/contracts.md). */
export type ReconcileCounts = Pick<
  ReconcileResult,
  | 'inventoried'
  | 'redriven'
  | 'parked'
  | 'discarded'
  | 'inDlq'
  | 'missing'
  | 'duplicateSendsPrevented'
  | 'possibleDuplicateSends'
> &
  Partial<
    Pick<
      ReconcileResult,
      | 'returned'
      | 'expired'
      | 'balanced'
      | 'lateArrivals'
      | 'lateMovedUnclassified'
      | 'inFlight'
      | 'missingMessages'
      | 'possibleDuplicates'
      | 'redrivenOutside'
    >
  >;

/**
 * The Reconcile result of one execution: its `Reconcile` state's, or, when a step between the
 * approval and the bulk move failed, `ReconcileAfterFailure`'s (the same function, run before
 * RecordFailure reports the failure); undefined when the execution reconciled nothing.
 */
export function reconcileOf(result: { taskResults: Record<string, unknown> }): ReconcileCounts | undefined {
  return (result.taskResults.Reconcile ?? result.taskResults.ReconcileAfterFailure) as
    | ReconcileCounts
    | undefined;
}

/** A run a scenario started after the main one, as its own execution reported it. */
export interface LaterRun {
  executionName: string;
  status: string;
  outcome: string | null;
  /** Why it ended there, from its own states. */
  reason: string | null;
  /** Messages it moved: its recording mover's (sample included), or its move tasks'. */
  moved: number;
  /** Its Reconcile (the incident across all its runs), when it reconciled. */
  reconcile: Pick<ReconcileCounts, 'inventoried' | 'redriven' | 'parked' | 'inDlq' | 'missing'> | null;
}

/** The report of one local run. */
export interface RunReport {
  /** The scenario that ran (`healthy` for a plain `npm start`). */
  scenario: string;
  /** What the scenario expects, in words (terminal state first). */
  expected: string;
  /** True when the run ended as the scenario expects; `problems` says why not. */
  asExpected: boolean;
  problems: string[];
  incidentId: string | null;
  executionName: string | null;
  /** The execution's status: SUCCEEDED, FAILED, TIMED_OUT, ABORTED. */
  status: string;
  /** The terminal state the execution ended in (Done, SampleFailed, RedriveHalted...). */
  outcome: string | null;
  /** Why it ended there: the ramp's, the verification's or the refusal's reason. */
  reason: string | null;
  inventoried: number;
  redriven: number;
  parked: number;
  discarded: number;
  /** Still in the DLQ (IN_DLQ). */
  remaining: number;
  /** Held invisible in the DLQ by another receiver when the run ended (not counted as redriven). */
  inFlight: number;
  /** Left the DLQ with no record of where to (removed by hand, moved outside the pipeline, expired). */
  missing: number;
  /** The missing messages (DLQ MessageIds and idempotency keys; candidates when not exact). */
  missingMessages: Array<{ messageId: string; idempotencyKey: string }>;
  /** Envelopes of messages that reached the DLQ after triage (late arrivals). */
  lateArrivals: number;
  /** Of the late arrivals: carried by a move task before the pipeline classified them. */
  lateMovedUnclassified: number;
  /** New envelopes whose key had been redriven earlier in the run (samples or moved messages that came back). */
  returned: number;
  /** Sample messages the pipeline sent one by one. */
  sampled: number;
  /** Messages moved after the sample: by the run's move tasks, or by the recording mover (`bulkMovedBy`). */
  bulkMoved: number;
  /** What moved `bulkMoved`: StartMessageMoveTask, or the recording mover (functions/mover). */
  bulkMovedBy: 'move tasks' | 'the recording mover';
  /**
   * Of `redriven`: messages that left the DLQ outside the run (moved by hand or by another tool)
   * and that a consumer processed after they were last seen there (Reconcile's `redrivenOutside`).
   */
  redrivenOutside: number;
  duplicateSendsPrevented: number;
  /** Resends after a crash between record and send: the consumer's idempotency key absorbs them. */
  possibleDuplicateSends: number;
  /** Those messages. */
  possibleDuplicates: Array<{ messageId: string; idempotencyKey: string }>;
  /** inventoried + late arrivals + returned = redriven + parked + discarded + remaining + in flight + missing. */
  countsAddUp: boolean;
  /** The counts add up and nothing is missing. */
  balanced: boolean;
  /**
   * Exposure: distinct messages that reached the consumer during the run after a stay in the DLQ
   * and failed again (each counted once however often it was redelivered).
   */
  exposed: number;
  /** The bound on `exposed` that applied to this run, in messages. */
  exposureBound: number;
  /** How `exposureBound` was computed. */
  exposureBoundBasis: string;
  /** Why the ramp ended where it did, as a code and numbers (`reason` renders it), or null without a ramp. */
  rampReason?: RampReason | null;
  /** What a redrive with no gate would have exposed in this run, when the scenario can tell. */
  gatelessExposure?: { value: number; basis: string };
  /** Messages in the DLQ when the alarm fired (what the incident dead-lettered). */
  deadLettered: number;
  /** Billed state transitions of the run (every execution of it). */
  stateTransitions: number;
  /**
   * Executions the run took: 1, or more when it continued in a new execution before Step
   * Functions' 25,000-event history limit.
   */
  executions: number;
  /** History events of the run's largest execution (Step Functions allows 25,000). */
  historyEvents: number;
  /** The largest execution input or state input/output of the run, bytes (Step Functions allows 256 KiB). */
  largestPayloadBytes: number;
  /** Lambda invocations of the inventory (triage's first step, then ContinueInventory's). */
  inventoryInvocations: number;
  /** Lambda invocations of the run's Tasks, by state name, every execution together (retries included). */
  taskInvocations: Record<string, number>;
  /** How long those invocations ran, milliseconds, by state name (the local machine's time). */
  taskInvocationMs: Record<string, number>;
  /** Consumer facts: processed messages and keys processed twice (must be 0). */
  consumer: { processed: number; duplicatesSkipped: number; processedTwice: number };
  durationMs: number;
  /** When the run started and ended, ISO-8601 UTC. */
  startedAt?: string;
  endedAt?: string;
  /**
   * Runs the scenario started after the main one (an un-park run), each with its own outcome,
   * reason and counts; the figures above are the main run's.
   */
  laterRuns?: LaterRun[];
  /**
   * The on-call report of the incident as it stands after the run (what failed, how many, since
   * when, first expiry, what the redrive did, warnings, audit trail): the same `dlq show` prints.
   */
  onCall?: OnCallReport | null;
}

/**
 * inventoried + late arrivals + returned = redriven + parked + discarded + remaining + in flight +
 * missing (every envelope in exactly one state).
 */
export function countsAddUp(c: ReconcileCounts): boolean {
  return (
    c.inventoried + (c.lateArrivals ?? 0) + (c.returned ?? 0) ===
    c.redriven + c.parked + c.discarded + c.inDlq + (c.inFlight ?? 0) + c.missing
  );
}

/** The conservation checks every scenario keeps unless it expects otherwise: nothing missing, counts add up. */
export function conservationProblems(report: RunReport): string[] {
  const problems: string[] = [];
  if (report.missing !== 0) problems.push(`missing ${report.missing} (${missingIds(report)}), expected 0`);
  if (!report.countsAddUp) problems.push('the counts do not add up');
  return problems;
}

/** The first missing MessageIds, for a line of text. */
function missingIds(report: RunReport): string {
  const ids = report.missingMessages.slice(0, 5).map((m) => m.messageId);
  return `${ids.join(', ')}${report.missingMessages.length > ids.length ? ', ...' : ''}`;
}

/** The exposure check: `exposed <= exposureBound`. */
export function exposureProblems(report: RunReport): string[] {
  return report.exposed > report.exposureBound
    ? [`exposed ${report.exposed} exceeds the bound ${report.exposureBound} (${report.exposureBoundBasis})`]
    : [];
}

/**
 * 0 when the run ended as its scenario expects and is balanced; 1 when it did not end as
 * expected; 3 when it did, but messages are missing (a scenario that removes messages by hand:
 * the report names them, and the run is still not clean).
 */
export function exitCodeOf(report: RunReport): number {
  if (!report.asExpected) return 1;
  return report.balanced ? 0 : 3;
}

/** Widest value column of {@link formatReport}, characters: longer values wrap onto more lines. */
export const REPORT_VALUE_WIDTH = 120;

/**
 * `text` cut into lines of at most `width` characters, at its own line breaks (a failure's cause
 * can carry them) and at spaces where it can (a longer word is split).
 */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split(/\r?\n/)) {
    let rest = paragraph;
    while (rest.length > width) {
      const space = rest.lastIndexOf(' ', width);
      const cut = space > 0 ? space : width;
      lines.push(rest.slice(0, cut));
      rest = rest.slice(space > 0 ? cut + 1 : cut);
    }
    lines.push(rest);
  }
  return lines;
}

/**
 * The consumer row: what it processed, keys it processed twice (must be 0) and, when a redrive sent
 * a copy twice (a possible duplicate send), the copies its idempotency key made it skip: a duplicate
 * send with no key processed twice is that skip, not a contradiction.
 */
export function consumerText(consumer: RunReport['consumer']): string {
  const skipped =
    consumer.duplicatesSkipped > 0
      ? `; duplicates skipped by idempotency key: ${consumer.duplicatesSkipped}`
      : '';
  return `${consumer.processed} (keys processed twice: ${consumer.processedTwice}${skipped})`;
}

/**
 * The story's line for an execution that did not succeed. A `Failed` run's reason is RecordFailure's
 * sentence (the report's reason row: the failed step's error and where the messages are), so the
 * Fail state's cause, which only points at `$.error` in an execution history that `npm start`'s
 * stack no longer has once it ends, is left out; without RecordFailure's sentence it is kept.
 */
export function workflowEndedLine(
  result: { status: string; error: string | null; cause: string | null },
  recordFailureText: string | null,
): string {
  if (recordFailureText)
    return `Workflow ended ${result.status}${result.error ? `: ${result.error}` : ''}; why, and where the messages are: the reason below.`;
  return `Workflow ended ${result.status}: ${result.error ?? ''} ${result.cause ?? ''}`.trim();
}

/** The report as an aligned two-column table. */
export function formatReport(report: RunReport): string {
  const rows: Array<[string, string]> = [
    ['scenario', report.scenario],
    ['expected', report.expected],
    ['as expected', report.asExpected ? 'yes' : `NO: ${report.problems.join('; ')}`],
    ['incident', report.incidentId ?? '-'],
    [
      'execution',
      `${report.executionName ?? '-'} (${report.status}${report.outcome ? `, ${report.outcome}` : ''})`,
    ],
    ['reason', report.reason ?? '-'],
    ['inventoried', String(report.inventoried)],
    [
      'redriven',
      `${report.redriven} (${report.sampled} sampled, ${report.bulkMoved} moved by ${report.bulkMovedBy}${report.redrivenOutside > 0 ? `, ${report.redrivenOutside} outside the run: moved by hand or another tool, then processed` : ''})`,
    ],
    ['parked', String(report.parked)],
    ['discarded', String(report.discarded)],
    ['remaining in DLQ', String(report.remaining)],
    ['in flight', String(report.inFlight)],
    ['missing', report.missing === 0 ? '0' : `${report.missing} (${missingIds(report)})`],
    ['late arrivals', `${report.lateArrivals} (moved unclassified: ${report.lateMovedUnclassified})`],
    ['returned to the DLQ', String(report.returned)],
    ['duplicate sends prevented', String(report.duplicateSendsPrevented)],
    [
      'possible duplicate sends',
      report.possibleDuplicateSends === 0
        ? '0'
        : `${report.possibleDuplicateSends} (${report.possibleDuplicates
            .slice(0, 5)
            .map((d) => d.idempotencyKey)
            .join(', ')})`,
    ],
    ['counts add up', report.countsAddUp ? 'yes' : 'NO'],
    ['balanced', report.balanced ? 'yes' : 'NO (messages missing)'],
    ['exposed', `${report.exposed} (bound ${report.exposureBound})`],
    ['exposure bound', `${report.exposureBound} = ${report.exposureBoundBasis}`],
    ['dead-lettered', String(report.deadLettered)],
    ['state transitions', String(report.stateTransitions)],
    [
      'executions',
      `${report.executions} (largest history ${report.historyEvents} events, largest payload ${report.largestPayloadBytes} bytes)`,
    ],
    ['inventory invocations', String(report.inventoryInvocations)],
    ['consumer processed', consumerText(report.consumer)],
    ['duration', `${(report.durationMs / 1000).toFixed(1)} s`],
  ];
  for (const later of report.laterRuns ?? []) {
    const r = later.reconcile;
    rows.push([
      'then',
      `${later.executionName} (${later.status}${later.outcome ? `, ${later.outcome}` : ''}): ${later.moved} moved; ${later.reason ?? '-'}`,
    ]);
    if (r)
      rows.push([
        '  its reconcile',
        `${r.inventoried} inventoried, ${r.redriven} redriven, ${r.parked} parked, ${r.inDlq} in DLQ, ${r.missing} missing`,
      ]);
  }
  const now = Date.now();
  if (report.startedAt) rows.push(['started', clockText(Date.parse(report.startedAt), now)]);
  if (report.endedAt) rows.push(['ended', clockText(Date.parse(report.endedAt), now)]);
  const width = Math.max(...rows.map(([k]) => k.length));
  // A long value (a failure's cause, a refusal) wraps at spaces instead of widening every row.
  const valueWidth = Math.min(
    REPORT_VALUE_WIDTH,
    Math.max(...rows.flatMap(([, v]) => v.split(/\r?\n/).map((l) => l.length))),
  );
  const line = `+${'-'.repeat(width + 2)}+${'-'.repeat(valueWidth + 2)}+`;
  const table = [
    line,
    ...rows.flatMap(([k, v]) =>
      wrapText(v, valueWidth).map(
        (part, i) => `| ${(i === 0 ? k : '').padEnd(width)} | ${part.padEnd(valueWidth)} |`,
      ),
    ),
    line,
  ];
  const onCall = report.onCall
    ? ['', 'The incident, for the on-call engineer:', ...onCallReportLines(report.onCall, now)]
    : [];
  return [...table, ...onCall].join('\n');
}
