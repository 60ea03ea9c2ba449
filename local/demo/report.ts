/**
 * The end-of-run report of `npm start` (every scenario): where every inventoried message ended,
 * how many messages the redrive exposed to a failing consumer against the bound that applied, and
 * whether the run ended as its scenario expects. As a table, or as one JSON object (`--json`).
 */

import { type OnCallReport, onCallReportLines } from '#incident/on-call-report.js';
import { clockText } from '#platform/clock-text.js';
import type { ReconcileResult } from '../../functions/reconcile/reconcile.js';

/** Counts from the workflow's Reconcile step (`$.reconcile`, docs/contracts.md). */
export type ReconcileCounts = Pick<
  ReconcileResult,
  | 'inventoried'
  | 'redriven'
  | 'parked'
  | 'discarded'
  | 'inDlq'
  | 'lost'
  | 'duplicateSendsPrevented'
  | 'possibleDuplicateSends'
> &
  Partial<Pick<ReconcileResult, 'returned' | 'expired' | 'balanced'>> & {
    /** Envelopes of messages first seen after triage (docs/contracts.md `$.reconcile`). */
    lateArrivals?: number;
    /** Of those, moved by a move task before the pipeline classified them. */
    lateMovedUnclassified?: number;
  };

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
  lost: number;
  /** Envelopes of messages that reached the DLQ after triage (late arrivals, N02). */
  lateArrivals: number;
  /** Of the late arrivals: carried by a move task before the pipeline classified them. */
  lateMovedUnclassified: number;
  /** New envelopes whose key had been redriven earlier in the run (samples or moved messages that came back). */
  returned: number;
  /** Sample messages the pipeline sent one by one. */
  sampled: number;
  /** Messages the run's move tasks reported moved. */
  bulkMoved: number;
  duplicateSendsPrevented: number;
  /** Resends after a crash between record and send: the consumer's idempotency key absorbs them. */
  possibleDuplicateSends: number;
  /** inventoried = redriven + parked + discarded + remaining + lost. */
  countsAddUp: boolean;
  /**
   * Exposure: distinct messages that reached the consumer during the run after a stay in the DLQ
   * and failed again (each counted once however often it was redelivered).
   */
  exposed: number;
  /** The bound on `exposed` that applied to this run, in messages. */
  exposureBound: number;
  /** How `exposureBound` was computed. */
  exposureBoundBasis: string;
  /** Billed state transitions of the execution. */
  stateTransitions: number;
  /** Consumer facts: processed messages and keys processed twice (must be 0). */
  consumer: { processed: number; duplicatesSkipped: number; processedTwice: number };
  durationMs: number;
  /** When the run started and ended, ISO-8601 UTC. */
  startedAt?: string;
  endedAt?: string;
  /**
   * The on-call report of the incident as it stands after the run (what failed, how many, since
   * when, first expiry, what the redrive did, warnings, audit trail): the same `dlq show` prints.
   */
  onCall?: OnCallReport | null;
}

/** inventoried = redriven + parked + discarded + remaining + lost (every envelope in exactly one state). */
export function countsAddUp(c: ReconcileCounts): boolean {
  return c.inventoried === c.redriven + c.parked + c.discarded + c.inDlq + c.lost;
}

/** The conservation checks every scenario keeps unless it expects otherwise: nothing lost, counts add up. */
export function conservationProblems(report: RunReport): string[] {
  const problems: string[] = [];
  if (report.lost !== 0) problems.push(`lost ${report.lost}, expected 0`);
  if (!report.countsAddUp) problems.push('the counts do not add up');
  return problems;
}

/** The exposure check: `exposed <= exposureBound`. */
export function exposureProblems(report: RunReport): string[] {
  return report.exposed > report.exposureBound
    ? [`exposed ${report.exposed} exceeds the bound ${report.exposureBound} (${report.exposureBoundBasis})`]
    : [];
}

/** 0 when the run ended as its scenario expects, else 1. */
export function exitCodeOf(report: RunReport): number {
  return report.asExpected ? 0 : 1;
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
    ['redriven', `${report.redriven} (${report.sampled} sampled, ${report.bulkMoved} moved by move tasks)`],
    ['parked', String(report.parked)],
    ['discarded', String(report.discarded)],
    ['remaining in DLQ', String(report.remaining)],
    ['lost', String(report.lost)],
    ['late arrivals', `${report.lateArrivals} (moved unclassified: ${report.lateMovedUnclassified})`],
    ['returned to the DLQ', String(report.returned)],
    ['duplicate sends prevented', String(report.duplicateSendsPrevented)],
    ['possible duplicate sends', String(report.possibleDuplicateSends)],
    ['counts add up', report.countsAddUp ? 'yes' : 'NO'],
    ['exposed', `${report.exposed} (bound ${report.exposureBound})`],
    ['exposure bound', `${report.exposureBound} = ${report.exposureBoundBasis}`],
    ['state transitions', String(report.stateTransitions)],
    [
      'consumer processed',
      `${report.consumer.processed} (keys processed twice: ${report.consumer.processedTwice})`,
    ],
    ['duration', `${(report.durationMs / 1000).toFixed(1)} s`],
  ];
  const now = Date.now();
  if (report.startedAt) rows.push(['started', clockText(Date.parse(report.startedAt), now)]);
  if (report.endedAt) rows.push(['ended', clockText(Date.parse(report.endedAt), now)]);
  const width = Math.max(...rows.map(([k]) => k.length));
  const line = `+${'-'.repeat(width + 2)}+${'-'.repeat(Math.max(...rows.map(([, v]) => v.length)) + 2)}+`;
  const valueWidth = line.length - width - 7;
  const table = [line, ...rows.map(([k, v]) => `| ${k.padEnd(width)} | ${v.padEnd(valueWidth)} |`), line];
  const onCall = report.onCall
    ? ['', 'The incident, for the on-call engineer:', ...onCallReportLines(report.onCall, now)]
    : [];
  return [...table, ...onCall].join('\n');
}
