/**
 * The end-of-run report of `npm start`: where every inventoried message ended, as a table or as
 * one JSON object. The run succeeds only when nothing was lost and the counts add up
 * (inventoried = redriven + parked + discarded + remaining + lost, with lost = 0).
 */

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
>;

/** The report of one local run. */
export interface RunReport {
  incidentId: string | null;
  executionName: string | null;
  /** The execution's status (SUCCEEDED, FAILED...) and the outcome it ended in (a state name). */
  status: string;
  outcome: string | null;
  inventoried: number;
  redriven: number;
  parked: number;
  discarded: number;
  /** Still in the DLQ (IN_DLQ). */
  remaining: number;
  lost: number;
  duplicateSendsPrevented: number;
  /** Resends after a crash between record and send: the consumer's idempotency key absorbs them. */
  possibleDuplicateSends: number;
  /** inventoried = redriven + parked + discarded + remaining + lost. */
  countsAddUp: boolean;
  /** Billed state transitions of the execution. */
  stateTransitions: number;
  /** Consumer facts: processed messages and keys processed twice (must be 0). */
  consumer: { processed: number; duplicatesSkipped: number; processedTwice: number };
  durationMs: number;
}

/** inventoried = redriven + parked + discarded + remaining + lost (every envelope in exactly one state). */
export function countsAddUp(c: ReconcileCounts): boolean {
  return c.inventoried === c.redriven + c.parked + c.discarded + c.inDlq + c.lost;
}

/** 0 when nothing was lost and the counts add up, else 1. */
export function exitCodeOf(report: RunReport): number {
  return report.lost === 0 && report.countsAddUp ? 0 : 1;
}

/** The report as an aligned two-column table. */
export function formatReport(report: RunReport): string {
  const rows: Array<[string, string]> = [
    ['incident', report.incidentId ?? '-'],
    [
      'execution',
      `${report.executionName ?? '-'} (${report.status}${report.outcome ? `, ${report.outcome}` : ''})`,
    ],
    ['inventoried', String(report.inventoried)],
    ['redriven', String(report.redriven)],
    ['parked', String(report.parked)],
    ['discarded', String(report.discarded)],
    ['remaining in DLQ', String(report.remaining)],
    ['lost', String(report.lost)],
    ['duplicate sends prevented', String(report.duplicateSendsPrevented)],
    ['possible duplicate sends', String(report.possibleDuplicateSends)],
    ['counts add up', report.countsAddUp ? 'yes' : 'NO'],
    ['state transitions', String(report.stateTransitions)],
    [
      'consumer processed',
      `${report.consumer.processed} (keys processed twice: ${report.consumer.processedTwice})`,
    ],
    ['duration', `${(report.durationMs / 1000).toFixed(1)} s`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const line = `+${'-'.repeat(width + 2)}+${'-'.repeat(Math.max(...rows.map(([, v]) => v.length)) + 2)}+`;
  const valueWidth = line.length - width - 7;
  return [line, ...rows.map(([k, v]) => `| ${k.padEnd(width)} | ${v.padEnd(valueWidth)} |`), line].join('\n');
}
