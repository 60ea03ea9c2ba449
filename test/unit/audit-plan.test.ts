import { describe, expect, it } from 'vitest';
import { auditPlanOf } from '#incident/audit-trail.js';

// What the audit trail keeps of a run's plan (`$.plan`, ValidateInput's output).
const plan = {
  incidentId: 'inc-1',
  dlqArn: 'arn:aws:sqs:us-east-1:123456789012:orders-dlq',
  mode: 'redrive',
  sampleSize: 3,
  rampRates: [5, 20],
  dwellSeconds: 30,
  destinationArn: null,
  discardPoison: false,
  requestedBy: 'carol',
  unpark: false,
};

describe('auditPlanOf', () => {
  it('keeps the rates, sample size and dwell the run follows', () => {
    const { incidentId: _i, dlqArn: _d, unpark: _u, ...kept } = plan;
    expect(auditPlanOf(plan)).toEqual(kept);
  });

  it('says mode unpark for an un-park run (and dry-run, unpark for its dry run), with the rates it used', () => {
    expect(auditPlanOf({ ...plan, unpark: true })).toMatchObject({ mode: 'unpark', rampRates: [5, 20] });
    expect(auditPlanOf({ ...plan, unpark: true, mode: 'dry-run' }).mode).toBe('dry-run, unpark');
  });
});
