import { describe, expect, it } from 'vitest';
import { scaled } from '../support/timeouts.js';
import { useWorkflowStack } from '../support/workflow-stack.js';
import { runIncident } from './harness.js';

describe('workflow cost on the local stack (real ASL, real handlers)', () => {
  const local = useWorkflowStack();

  it(
    'cost does not grow with the DLQ: 50 and 500 messages take the same state transitions, or nearly',
    async () => {
      const small = await runIncident(local.sqs, { name: 'cost-small', messages: 50, poisonEvery: 10 });
      const large = await runIncident(local.sqs, {
        name: 'cost-large',
        messages: 500,
        poisonEvery: 10,
        consumerConcurrency: 4,
      });
      console.log(
        `state transitions: 50 messages -> ${small.result.stateTransitions}, 500 messages -> ${large.result.stateTransitions}`,
      );
      expect(small.result.status).toBe('SUCCEEDED');
      expect(large.result.status).toBe('SUCCEEDED');
      expect(small.reconcile?.inventoried).toBe(50);
      expect(large.reconcile?.inventoried).toBe(500);
      expect(large.reconcile?.missing).toBe(0);
      // Ten times the messages: the same states plus at most a few Dwell -> CheckProgress ->
      // RampDecision? loops (3 transitions each, bounded by ramp steps and elapsed time), never
      // per-message states (which would add hundreds).
      const loops = (path: string[]) => path.filter((s) => s === 'CheckProgress').length;
      console.log(`dwell/check loops: 50 -> ${loops(small.result.path)}, 500 -> ${loops(large.result.path)}`);
      const extra = large.result.stateTransitions - small.result.stateTransitions;
      // How many ramp loops a run needs depends on the machine's speed; the states outside the
      // ramp loop do not: the two runs pass the same ones in the same order.
      const RAMP_LOOP = new Set(['Dwell', 'CheckProgress', 'RampDecision?', 'StepUp']);
      const skeleton = (path: string[]) => path.filter((s) => !RAMP_LOOP.has(s));
      expect(skeleton(large.result.path)).toEqual(skeleton(small.result.path));
      // A slower machine moves 500 messages in more dwell periods; the bound leaves room for that
      // (five loops of up to four states) and is still far below one state per message.
      expect(Math.abs(extra)).toBeLessThanOrEqual(20);
      expect(large.result.stateTransitions).toBeLessThan(small.result.stateTransitions * 2);
    },
    scaled(150_000),
  );
});
