import { describe, expect, it } from 'vitest';
import {
  checkQueueTypes,
  checkRampCapacity,
  checkRampRates,
  MAX_MOVE_TASK_SECONDS,
  rampCapacity,
  verifyWindowSeconds,
} from '#transfer/redrive-plan.js';

describe('ramp rate checks', () => {
  it('C06 rejects a ramp step above 500 msg/s, naming the step', () => {
    expect(checkRampRates([10, 100, 600])).toEqual([
      { code: 'RATE_ABOVE_MAX', message: 'rampRates[2]: 600 exceeds max 500 msg/s' },
    ]);
  });

  it('rejects zero, fractional and empty ramps and accepts 1..500', () => {
    expect(checkRampRates([0, 2.5]).map((p) => p.code)).toEqual(['RATE_INVALID', 'RATE_INVALID']);
    expect(checkRampRates([])).toHaveLength(1);
    expect(checkRampRates([1, 500])).toEqual([]);
  });
});

describe('the 36-hour move task limit', () => {
  it('C06 refuses 1 msg/s for a 200000-message backlog (1 x 129600 s < 200000) and says which rate would do', () => {
    expect(MAX_MOVE_TASK_SECONDS).toBe(129_600);
    const problem = checkRampCapacity(200_000, [1], 60);
    expect(problem?.code).toBe('RAMP_TOO_SLOW');
    expect(problem?.message).toContain('about 129600 messages, fewer than the 200000');
    expect(problem?.message).toContain('at least 2 msg/s');
  });

  it('counts one dwell at each early step plus 36 h at the last rate', () => {
    expect(rampCapacity([5, 50], 60)).toBe(5 * 60 + 50 * 129_600);
    expect(checkRampCapacity(129_600, [1], 60)).toBeUndefined();
  });
});

describe('queue type match', () => {
  const dlqFifo = 'arn:aws:sqs:us-east-1:111122223333:orders-dlq.fifo';
  it('C08 accepts FIFO -> FIFO and refuses FIFO -> standard and standard -> FIFO', () => {
    expect(
      checkQueueTypes(dlqFifo, ['arn:aws:sqs:us-east-1:111122223333:orders-queue.fifo']),
    ).toBeUndefined();
    expect(checkQueueTypes(dlqFifo, ['arn:aws:sqs:us-east-1:111122223333:orders-replay'])?.message).toMatch(
      /^queue types differ \(FIFO vs standard\)/,
    );
    expect(
      checkQueueTypes('arn:aws:sqs:us-east-1:111122223333:orders-dlq', [
        'arn:aws:sqs:us-east-1:111122223333:orders-queue.fifo',
      ])?.code,
    ).toBe('QUEUE_TYPE_MISMATCH');
  });
});

describe('verification window', () => {
  it('is the longest visibility timeout x maxReceiveCount over the sources, plus the margin', () => {
    expect(
      verifyWindowSeconds(
        [
          { visibilityTimeoutSeconds: 30, maxReceiveCount: 5 },
          { visibilityTimeoutSeconds: 60, maxReceiveCount: 3 },
        ],
        30,
      ),
    ).toBe(210);
  });
});
