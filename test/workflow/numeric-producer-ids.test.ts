import { describe, expect, it } from 'vitest';
import { useWorkflowStack } from '../support/workflow-stack.js';
import { envelopeStates, runIncident } from './harness.js';

describe('producer ids that are integers beyond 2^53, end to end', () => {
  const local = useWorkflowStack();

  it('orders with neighbouring ids above 2^53 are each inventoried, redriven and applied once', async () => {
    // Neighbours 1 apart: as doubles, each run of 256 of them reads as one number.
    const run = await runIncident(local.sqs, {
      name: 'bigids',
      messages: 20,
      poisonEvery: 0,
      numericIdsFrom: 1_234_567_890_123_456_789n,
    });
    expect(run.result.status).toBe('SUCCEEDED');
    expect(run.result.path.at(-1)).toBe('Done');
    expect(run.reconcile).toMatchObject({ inventoried: 20, redriven: 20, missing: 0, inDlq: 0 });
    expect(await envelopeStates(run.incident.queues.dlqArn)).toMatchObject({ REDRIVEN: 20, IN_DLQ: 0 });
    expect(run.incident.produced.orderIds.at(-1)).toBe('1234567890123456808');
    // The consumer package's middleware applied every order once and skipped none as a duplicate.
    expect(run.incident.consumer.stats.processed).toBe(20);
    expect(run.incident.consumer.stats.processedTwice).toBe(0);
  });
});
