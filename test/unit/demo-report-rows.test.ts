import { describe, expect, it } from 'vitest';
import { stepSecondsText } from '#incident/on-call-report.js';
import { describeRequest } from '../../local/approver.js';
import { formatReport, type RunReport, workflowEndedLine } from '../../local/demo/report.js';
import { SAMPLE_RUN_REPORT } from '../support/run-report-fixture.js';

const BASE = SAMPLE_RUN_REPORT;

const row = (report: RunReport, key: string) =>
  formatReport(report)
    .split('\n')
    .find((l) => l.startsWith(`| ${key} `));

describe('npm start report rows', () => {
  it('the consumer row names the duplicates its idempotency key skipped (crash-after-send)', () => {
    const report: RunReport = {
      ...BASE,
      possibleDuplicateSends: 1,
      possibleDuplicates: [{ messageId: 'm-26', idempotencyKey: 'crash-after-send-000026' }],
      consumer: { processed: 57, duplicatesSkipped: 1, processedTwice: 0 },
    };
    expect(row(report, 'consumer processed')).toMatch(
      /\| 57 \(keys processed twice: 0; duplicates skipped by idempotency key: 1\) +\|$/,
    );
    expect(row(BASE, 'consumer processed')).toMatch(/\| 40 \(keys processed twice: 0\) +\|$/);
  });

  it("a Failed run's story line leaves out the Fail state's pointer to the execution history", () => {
    const failed = {
      status: 'FAILED',
      error: 'Redrive.Failed',
      cause: 'A step failed; see $.error in the execution history and the incident record.',
    };
    const line = workflowEndedLine(failed, 'Redrive of q failed at a step: Redrive.Refused: ...');
    expect(line).not.toContain('execution history');
    expect(line).toMatch(/^Workflow ended FAILED: Redrive\.Failed; /);
    // Without RecordFailure's sentence the cause is all there is: kept.
    expect(workflowEndedLine(failed, null)).toBe(`Workflow ended FAILED: Redrive.Failed ${failed.cause}`);
  });
});

describe('the dwell a move-task ramp really has (plan 2 s, return window 5 s)', () => {
  it('the approval states the step length the ramp runs, not only the plan dwell', () => {
    expect(stepSecondsText(2, 5)).toMatch(
      /^5 s per step \(the plan's 2 s dwell, at least one 5 s return window/,
    );
    expect(stepSecondsText(60, 32)).toBe('60 s per step');
    expect(stepSecondsText(2)).toBe('2 s per step');
  });
});

describe('the approval npm start prints', () => {
  it('states the step length the move task runs (plan 2 s, return window 5 s)', async () => {
    const text = await describeRequest({
      taskToken: 't',
      executionName: 'e',
      payload: {
        plan: { dlqArn: 'arn:aws:sqs:us-east-1:1:q', rampRates: [5, 50], sampleSize: 5, dwellSeconds: 2 },
        preflight: { dlqDepth: 10, verifyWindowSeconds: 5 },
      },
      timeoutSeconds: null,
    });
    expect(text).toContain(
      "ramp 5 -> 50 msg/s, 5 s per step (the plan's 2 s dwell, at least one 5 s return window",
    );
  });
});
