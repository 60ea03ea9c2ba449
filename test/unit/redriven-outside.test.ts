import { describe, expect, it } from 'vitest';
import { type OnCallReport, onCallReportLines } from '#incident/on-call-report.js';
import { notify } from '../../functions/notify/notify.js';
import { formatReport, type RunReport, wrapText } from '../../local/demo/report.js';
import { createMemoryNotifier } from '../support/memory-notifier.js';
import { SAMPLE_RUN_REPORT } from '../support/run-report-fixture.js';

// Messages moved out of the DLQ by hand and then processed by a consumer are counted by Reconcile
// as `redrivenOutside` (of redriven, not missing): every place that shows the counts says so.
const plan = { incidentId: 'inc-1', dlqArn: 'arn:aws:sqs:us-east-1:123456789012:orders-dlq' };
const reconcile = { inventoried: 40, redriven: 40, parked: 0, discarded: 0, inDlq: 0, missing: 0 };

describe('redrivenOutside', () => {
  it("Notify's Slack counts and text show it when non-zero, and leave it out at zero", async () => {
    const notifier = createMemoryNotifier();
    const incidents = { updateIncident: async () => undefined };
    const outside = await notify(
      { outcome: 'completed', run: { plan, reconcile: { ...reconcile, redrivenOutside: 5 } } },
      { notifier, incidents },
    );
    await notify(
      { outcome: 'completed', run: { plan, reconcile: { ...reconcile, redrivenOutside: 0 } } },
      { notifier, incidents },
    );
    expect(notifier.sent.map((m) => m.fields?.redrivenOutside)).toEqual([5, undefined]);
    expect(outside.text).toContain(
      '40 redriven (5 of them outside this pipeline: moved by hand or another tool',
    );
    expect(notifier.sent[1]?.text).not.toContain('outside');
  });

  it('the local report shows it in the redriven row and in --json, and the on-call lines beside redriven', () => {
    const report: RunReport = SAMPLE_RUN_REPORT;
    expect(formatReport(report)).toMatch(
      /\| redriven +\| 40 \(5 sampled, 30 moved by move tasks, 5 outside the run: moved by hand or another tool, then processed\)/,
    );
    expect(formatReport({ ...report, redrivenOutside: 0 })).toMatch(
      /\| redriven +\| 40 \(5 sampled, 30 moved by move tasks\) +\|/,
    );
    // A long reason wraps at spaces under its key instead of widening every row.
    const reason = `Redrive failed at a step: Redrive.Refused: ${'word '.repeat(60)}end.`;
    const lines = formatReport({ ...report, reason }).split('\n');
    const widths = new Set(lines.filter((l) => l.startsWith('|') || l.startsWith('+')).map((l) => l.length));
    expect(widths.size).toBe(1);
    const at = lines.findIndex((l) => l.startsWith('| reason '));
    expect(lines[at]).toMatch(/^\| reason +\| Redrive failed at a step: Redrive\.Refused: word/);
    expect(lines[at + 1]).toMatch(/^\| +\| word /);
    const joined = lines
      .slice(at, at + 4)
      .map((l) => l.split('|')[2]?.trim())
      .join(' ');
    expect(joined).toContain(reason);
    expect(wrapText('aaaa bbbb cccccccccc', 6)).toEqual(['aaaa', 'bbbb', 'cccccc', 'cccc']);
    // A value with line breaks (a failure's cause can carry them) stays inside the table.
    expect(wrapText('first line\nsecond line', 120)).toEqual(['first line', 'second line']);
    const withBreak = formatReport({
      ...report,
      reason: 'Redrive.InvalidInput: bad input:\n  plan.dlqArn: required',
    }).split('\n');
    const first = withBreak.findIndex((l) => l.startsWith('+'));
    const last = withBreak.findIndex((l, i) => i > first && l.startsWith('+'));
    const table = withBreak.slice(first, last + 1);
    expect(table.length).toBeGreaterThan(3);
    expect(table.every((l) => /^[|+].*[|+]$/.test(l))).toBe(true);
    expect(new Set(table.map((l) => l.length)).size).toBe(1);
    expect(table.some((l) => /^\| +\| {3}plan\.dlqArn: required +\|$/.test(l))).toBe(true);
    const onCall = {
      incidentId: 'inc-1',
      dlqArn: plan.dlqArn,
      queue: 'orders-dlq',
      status: 'CLOSED',
      openedAt: null,
      messages: 40,
      partial: false,
      countBySource: {},
      countByClassification: {},
      topCauses: [],
      moreCauses: 0,
      oldestMessage: null,
      firstRetentionDeadline: null,
      expiringWithin24h: 0,
      redrive: {
        outcome: 'completed',
        text: null,
        inventoried: 40,
        redriven: 40,
        parked: 0,
        discarded: 0,
        inDlq: 0,
        inFlight: null,
        missing: 0,
        lateArrivals: null,
        returned: null,
        redrivenOutside: 5,
        balanced: true,
        exposureBound: null,
        exposureBasis: null,
      },
      warnings: [],
      audit: [],
    } satisfies OnCallReport;
    expect(onCallReportLines(onCall, Date.now())).toContain(
      'redrive:        completed: 40 inventoried, 40 redriven, 5 of them redriven outside the pipeline, 0 parked, 0 discarded, 0 still in DLQ, 0 missing',
    );
  });
});
