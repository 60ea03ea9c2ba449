import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRunMetrics, METRICS_NAMESPACE, outcomeMetric } from '#platform/metrics.js';

type Emf = {
  _aws: {
    CloudWatchMetrics: Array<{
      Namespace: string;
      Dimensions: string[][];
      Metrics: Array<{ Name: string; Unit: string }>;
    }>;
  };
  [field: string]: unknown;
};

describe('pipeline metrics (EMF through Powertools)', () => {
  let lines: string[];
  beforeEach(() => {
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
    lines = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  it('publishes each value once per DLQ (DlqName) and once pipeline-wide, in the DlqRedrive namespace with its unit', () => {
    const metrics = createRunMetrics(
      new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'dlq-redrive' }),
    );
    metrics.record('arn:aws:sqs:us-east-1:111122223333:orders-dlq', {
      Missing: 2,
      Redriven: 160,
      RunDuration: 93.5,
    });
    const docs = lines.map((l) => JSON.parse(l) as Emf);
    expect(docs).toHaveLength(2);
    const [perDlq, pipeline] = docs as [Emf, Emf];
    expect(perDlq._aws.CloudWatchMetrics[0]?.Namespace).toBe('DlqRedrive');
    expect(perDlq._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service', 'DlqName']]);
    expect(pipeline._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service']]);
    expect([perDlq.DlqName, perDlq.Missing, perDlq.Redriven, perDlq.RunDuration]).toEqual([
      'orders-dlq',
      2,
      160,
      93.5,
    ]);
    expect(pipeline.DlqName).toBeUndefined();
    expect(perDlq._aws.CloudWatchMetrics[0]?.Metrics).toEqual(
      expect.arrayContaining([
        { Name: 'Missing', Unit: 'Count' },
        { Name: 'RunDuration', Unit: 'Seconds' },
      ]),
    );
  });

  it('publishes nothing for no values or non-numbers, and a failing publish never throws', () => {
    const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'dlq-redrive' });
    createRunMetrics(metrics).record('arn:aws:sqs:us-east-1:111122223333:orders-dlq', {
      Missing: Number.NaN,
    });
    expect(lines).toEqual([]);
    vi.spyOn(metrics, 'publishStoredMetrics').mockImplementation(() => {
      throw new Error('stdout closed');
    });
    expect(() => createRunMetrics(metrics).record('arn:aws:sqs:us-east-1:1:q', { Parked: 1 })).not.toThrow();
  });

  it('counts each run under its outcome, and only the outcomes a dashboard shows', () => {
    expect(['completed', 'halted', 'cancelled', 'rejected'].map(outcomeMetric)).toEqual([
      'RunsCompleted',
      'RunsHalted',
      'RunsCancelled',
      undefined,
    ]);
  });
});
