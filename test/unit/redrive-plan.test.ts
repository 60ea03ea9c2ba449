import { describe, expect, it } from 'vitest';
import {
  checkQueueTypes,
  checkRampCapacity,
  checkRampRates,
  forecastRun,
  forecastText,
  MAX_MOVE_TASK_SECONDS,
  parkReason,
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

describe('the forecast a dry run prints', () => {
  const base = {
    depth: 1000,
    toPark: 20,
    parkTo: 'parking-queue' as const,
    sampleSize: 5,
    rampRates: [5, 50, 200],
    dwellSeconds: 60,
    verifyWindowSeconds: 90,
    sampleOnly: false,
  };

  it('steps last one gate period (at least one return window), the last moves the rest, and the run ends one return window after it', () => {
    const f = forecastRun(base);
    expect([f.toPark, f.sample, f.toMove]).toEqual([20, 5, 975]);
    // 5 msg/s x 90 s = 450, then 50 msg/s moves the 525 left in 11 s: the 200 msg/s step never runs.
    expect(f.steps).toEqual([
      { rate: 5, messages: 450, seconds: 90 },
      { rate: 50, messages: 525, seconds: 11 },
    ]);
    expect(f.estimatedSeconds).toBe(90 + 90 + 11 + 90);
    expect(forecastText(f)).toBe(
      'park 20, sample 5 (then 90 s verification window), move 975 at 5 msg/s for 1 min (450), then 50 msg/s for 11 s (525); about 4 min in all',
    );
  });

  it('a sample-only plan and an all-poison DLQ move nothing in bulk', () => {
    expect(forecastRun({ ...base, sampleOnly: true })).toMatchObject({
      toMove: 0,
      steps: [],
      estimatedSeconds: 90,
    });
    const allPoison = forecastRun({ ...base, depth: 20, parkTo: 'discard' });
    expect(allPoison).toMatchObject({
      parkTo: 'discard',
      sample: 0,
      toMove: 0,
      steps: [],
      estimatedSeconds: 0,
    });
    expect(forecastText(allPoison)).toBe('discard 20, sample none, move nothing in bulk; about 0 s in all');
  });

  it('the last rate carries a backlog the early steps leave, for as long as it takes', () => {
    const f = forecastRun({ ...base, depth: 100_000, toPark: 0, rampRates: [10, 100], dwellSeconds: 120 });
    expect(f.steps).toEqual([
      { rate: 10, messages: 1200, seconds: 120 },
      { rate: 100, messages: 100_000 - 5 - 1200, seconds: Math.ceil((100_000 - 5 - 1200) / 100) },
    ]);
  });
});

describe('which messages Park keeps out of the redrive', () => {
  const plan = { maxRedrives: 3, destinationArn: null };
  const sentStraight = { classification: 'transient', redriveCount: 0, sourceArn: 'unknown' } as const;

  it('parks a message sent straight to an SQS DLQ (no source queue to return it to)', () => {
    expect(parkReason(sentStraight, plan)).toMatch(/^no DeadLetterQueueSourceArn/);
    expect(
      parkReason({ ...sentStraight, origin: { kind: 'sqs', arn: null, via: 'redrive-policy' } }, plan),
    ).toMatch(/^no DeadLetterQueueSourceArn/);
  });

  it('keeps a transient message of an SNS or Lambda origin for the recording mover, and still parks its poison', () => {
    for (const origin of [
      { kind: 'sns', arn: 'arn:aws:sns:us-east-1:111122223333:orders', via: 'subscription-dlq' },
      { kind: 'lambda', arn: 'arn:aws:lambda:us-east-1:111122223333:function:orders', via: 'async-dlq' },
    ] as const) {
      expect(parkReason({ ...sentStraight, origin }, plan)).toBeUndefined();
      expect(parkReason({ ...sentStraight, classification: 'permanent', origin }, plan)).toBe(
        'classified permanent: do not redrive',
      );
    }
  });
});
