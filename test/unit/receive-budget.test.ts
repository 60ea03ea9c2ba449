import { describe, expect, it } from 'vitest';
import { peeksLeft, receiveBudget, runPeeks } from '#inventory/receive-budget.js';

describe('receive budget of a DLQ with its own RedrivePolicy', () => {
  it('leaves every message at most maxReceiveCount - 1 receives: one receive per peek on SQS, two on the stand-in', () => {
    // SQS: maxReceiveCount 4, never received: peeks to counts 1, 2, 3.
    expect([0, 1, 2, 3, 4].map((r) => peeksLeft(r, 4, 1))).toEqual([3, 2, 1, 0, 0]);
    // Stand-in: received once means count 2 after the release; one more peek would reach 4.
    expect([0, 1, 3].map((r) => peeksLeft(r, 6, 2))).toEqual([2, 1, 0]);
  });

  it('is limited by the most-received IN_DLQ message, and absent without a RedrivePolicy', () => {
    const policy = { redrivePolicy: { maxReceiveCount: 10, deadLetterTargetArn: 'arn:aws:sqs:r:1:next' } };
    const budget = receiveBudget(
      policy,
      [
        { messageId: 'a', receiveCount: 2, state: 'IN_DLQ' },
        { messageId: 'b', receiveCount: 7, state: 'IN_DLQ' },
        { messageId: 'c', receiveCount: 9, state: 'REDRIVEN' },
      ],
      1,
    );
    expect([budget?.peeksLeft, budget?.limitedBy]).toEqual([2, { messageId: 'b', receiveCount: 7 }]);
    expect(receiveBudget({ redrivePolicy: null }, [], 1)).toBeNull();
  });

  it('bounds a run by its steps: nothing for Park without messages to park, no ramp in sample-only', () => {
    expect(runPeeks({ toPark: 1, sampleSize: 5, rampSteps: 3, sampleOnly: false })).toEqual({
      total: 13,
      steps: 'recheck 1, Park 3, SampleRedrive 2, VerifySample 3, ramp gates 3, Reconcile 1',
    });
    expect(runPeeks({ toPark: 0, sampleSize: 5, rampSteps: 3, sampleOnly: true }).total).toBe(7);
  });
});
