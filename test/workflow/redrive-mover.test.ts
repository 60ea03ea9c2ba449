import { describe, expect, it } from 'vitest';
import { useWorkflowStack } from '../support/workflow-stack.js';
import { envelopeStates, runIncident } from './harness.js';

describe('the recording mover in the redrive workflow (real ASL, real handlers)', () => {
  const local = useWorkflowStack();

  it('a run selecting one cause group moves exactly that group through MoverSample and MoverStep; the other stays in the DLQ, unparked', async () => {
    const run = await runIncident(local.sqs, {
      name: 'mover-selective',
      messages: 40,
      poisonEvery: 4,
      input: { selection: { causes: ['DependencyUnavailable'] } },
    });
    const { result, reconcile, incident } = run;
    expect(result.error).toBeNull();
    expect(result.path.at(-1)).toBe('Done');
    expect(result.path).toEqual(expect.arrayContaining(['MoverSample', 'MoverStep', 'VerifySample']));
    expect(result.path).not.toContain('Park');
    expect(result.path).not.toContain('StartMoveTask');
    const preflight = (
      result.output as { preflight: { path: string; selection: { selected: number; total: number } } }
    ).preflight;
    expect([preflight.path, preflight.selection.selected, preflight.selection.total]).toEqual([
      'mover',
      30,
      40,
    ]);
    expect(await envelopeStates(incident.queues.dlqArn)).toEqual({
      IN_DLQ: 10,
      REDRIVEN: 30,
      PARKED: 0,
      DISCARDED: 0,
    });
    expect(reconcile).toMatchObject({ inventoried: 40, redriven: 30, inDlq: 10, missing: 0 });
    expect(run.dlqDepthAfter).toBe(10);
    // The consumer, healthy again, processed each selected order once; the poison was never sent.
    expect([incident.consumer.stats.processed, incident.consumer.stats.processedTwice]).toEqual([30, 0]);
  });
});
