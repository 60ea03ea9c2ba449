import { PassThrough, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { terminalApprover } from '../../local/approver.js';
import { startPhaseProgress } from '../../local/demo/progress.js';

/** A terminal that records what was written, in order. */
function fakeTerminal(): Writable & { written: string[]; isTTY: boolean; columns: number } {
  const written: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      written.push(String(chunk));
      done();
    },
  });
  return Object.assign(stream, { written, isTTY: true, columns: 100 });
}

describe('the approval prompt on a terminal', () => {
  it('owns the terminal: a running progress bar stops before the question and draws nothing while it waits', async () => {
    const terminal = fakeTerminal();
    let done = 0;
    const bar = startPhaseProgress('inventory', async () => ({ done: ++done, total: 1000 }), {
      tty: true,
      stream: terminal,
      pollMs: 20,
    });
    await sleep(100);
    const input = new PassThrough();
    const answers: unknown[] = [];
    const asked = terminalApprover({
      input,
      output: terminal,
      describe: async () => 'plan: redrive 1000',
    }).requestApproval(
      { taskToken: 't-1', executionName: 'run-1', payload: {}, timeoutSeconds: null },
      {
        sendTaskSuccess: async (_token, output) => void answers.push(output),
        sendTaskFailure: async () => undefined,
      },
    );
    while (!terminal.written.join('').includes('Approve this redrive?')) await sleep(10);
    const promptAt = terminal.written.length;
    await sleep(300);
    const drawnWhileWaiting = terminal.written.slice(promptAt).join('');
    input.write('n\n');
    await asked;
    await bar.stop();
    expect(drawnWhileWaiting).toBe('');
    expect(answers).toEqual([expect.objectContaining({ decision: 'rejected' })]);
  });
});
