import { describe, expect, it } from 'vitest';
import { runCell } from './crash-cell.js';
import { useCrashStack } from './crash-stack.js';

// Issue 9 item 4: a run that dies right after StartMessageMoveTask leaves a task that outlives its
// execution. The console restart must reconcile what that task moved, whether the DLQ still holds
// messages (the task was cancelled by RecordFailure) or not (the task emptied it first).
describe('a move task that outlives its execution (local stack, real handlers and ASL)', () => {
  useCrashStack();

  it('after a crash right after StartMessageMoveTask, the console restart reconciles what the task moved: nothing missing, nothing left IN_DLQ unreported', async () => {
    const outcome = await runCell({
      id: 'mt-outlives',
      crash: { functionFolder: 'move-task', command: 'StartMessageMoveTaskCommand', mode: 'restart' },
    });
    expect(outcome.crashes).toHaveLength(1);
    expect(outcome.executions.map((e) => e.status)).toEqual(['FAILED', 'SUCCEEDED']);
    const restart = outcome.executions[1];
    expect(restart?.path).toContain('Reconcile');
    expect(outcome.problems).toEqual([]);
    expect(outcome.report).toMatchObject({ missing: 0, inDlq: 0, inFlight: 0, balanced: true });
  });
});
