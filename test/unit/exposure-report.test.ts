/**
 * The exposure bound on every report: the incident item (Notify's fields), the on-call report the
 * CLI prints (`dlq show --json` and its table), and the Slack progress message.
 */
import { describe, expect, it } from 'vitest';
import { rampProgressMessage } from '#approval/ramp-progress-message.js';
import type { Incident } from '#incident/incident-store.js';
import { buildOnCallReport, onCallReportLines } from '#incident/on-call-report.js';
import type { ExposureBasis } from '#platform/reasons.js';

const BASIS: ExposureBasis = {
  returnWindowSeconds: 5,
  cleanAt: 1_000_000,
  from: 995_000,
  to: 1_005_000,
  terms: [
    { rate: 5, seconds: 5, messages: 25 },
    { rate: 25, seconds: 5, messages: 125 },
  ],
};

const incident = (extra: Record<string, unknown>): Incident =>
  ({
    incidentId: 'inc-1',
    dlqArn: 'arn:aws:sqs:us-east-1:123456789012:orders-dlq',
    dlqUrl: 'http://sqs/orders-dlq',
    alarmArn: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:orders-dlq',
    alarmName: 'orders-dlq',
    dedupeKey: 'k',
    stateTimestamp: '2026-01-01T00:00:00Z',
    sourceArns: [],
    status: 'STOPPED',
    summary: {
      messageCount: 200,
      countBySource: {},
      causes: [],
      countByClassification: {},
      oldestMessageAgeMs: null,
      earliestRetentionDeadline: null,
      expiringWithin24h: 0,
      partial: false,
    },
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
    outcome: 'halted',
    ...extra,
  }) as unknown as Incident;

describe('exposure bound on the reports', () => {
  it('the on-call report (dlq show --json) carries the bound and basis Notify recorded on the incident', () => {
    const report = buildOnCallReport(incident({ exposureBound: 150, exposureBasis: BASIS }), [], 2_000_000);
    expect(report.redrive).toMatchObject({ exposureBound: 150, exposureBasis: BASIS });
    expect(
      onCallReportLines(report, 2_000_000).some((l) => l.startsWith('exposure bound: 150 message(s)')),
    ).toBe(true);
  });

  it("reads a running ramp's own bound when Notify has not recorded one yet, and none without a ramp", () => {
    const running = buildOnCallReport(
      incident({
        ramp: {
          exposurePeak: { bound: 25, basis: { ...BASIS, terms: [{ rate: 5, seconds: 5, messages: 25 }] } },
        },
      }),
      [],
      2_000_000,
    );
    expect(running.redrive?.exposureBound).toBe(25);
    const none = buildOnCallReport(incident({}), [], 2_000_000);
    expect(none.redrive).toMatchObject({ exposureBound: null, exposureBasis: null });
  });

  it('the Slack progress message states the bound with its rates', () => {
    const message = rampProgressMessage({
      incidentId: 'inc-1',
      executionName: 'run-1',
      dlqArn: 'arn:aws:sqs:us-east-1:123456789012:orders-dlq',
      steps: [],
      plannedSteps: 3,
      moved: 150,
      toMove: 200,
      decision: 'halt',
      reason: 're-inflow',
      exposure: { bound: 150, basis: BASIS },
      ended: true,
      cancel: null,
      canCancel: true,
      nowMs: 2_000_000,
    });
    expect(JSON.stringify(message.blocks)).toContain(
      'exposure bound 150 message(s) at most: 5 msg/s x 5 s + 25 msg/s x 5 s',
    );
  });
});
