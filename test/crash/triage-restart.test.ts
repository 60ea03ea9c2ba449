import { describe, expect, it } from 'vitest';
import { scaled } from '../support/timeouts.js';
import { runCell } from './crash-cell.js';
import { useCrashStack } from './crash-stack.js';

// Issue 9 item 3: a triage that dies mid-scan leaves its inventory session holding the messages it
// received invisible (until holdUntil, beyond the restart). The console restart takes the dead
// session over (ValidateInput: abandoned session) and its inventory loop waits the held messages
// out, so every message is inventoried, redriven or parked, and reconciled: never RedriveRefused.
describe('a console restart after a triage that crashed mid-scan (local stack, real handlers and ASL)', () => {
  useCrashStack();

  it(
    'after a crash right after the scan ReceiveMessage, the restart takes over the dead inventory session and reconciles all 12 messages',
    async () => {
      const outcome = await runCell({
        id: 'triage-dead-scan',
        crash: { functionFolder: 'triage', command: 'ReceiveMessageCommand', mode: 'restart' },
      });
      expect(outcome.crashes).toHaveLength(1);
      const restart = outcome.executions[0];
      expect(restart?.status).toBe('SUCCEEDED');
      expect(restart?.path).toContain('ContinueInventory');
      expect(restart?.path).toContain('Reconcile');
      expect(outcome.problems).toEqual([]);
      expect(outcome.report).toMatchObject({
        inventoried: 12,
        missing: 0,
        inDlq: 0,
        inFlight: 0,
        balanced: true,
      });
      // The restart waits out the dead session's hold (its holdUntil, up to ~140 s) before the run
      // goes on: about 180 s in all on a quiet machine, past the suite's default 120 s.
    },
    scaled(600_000),
  );
});
