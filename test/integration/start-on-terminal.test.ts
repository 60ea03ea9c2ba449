import { spawn, spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { SHARED_DYNAMODB_ENV } from '../../local/shared-dynamo-env.js';
import { scaled } from '../support/timeouts.js';

const PROMPT = 'Approve this redrive? [y/N] ';
const hasScript = spawnSync('script', ['--version']).status === 0;

describe.skipIf(!hasScript)('npm start on a pseudo-terminal (util-linux script)', () => {
  it('shows the approval prompt intact until it is answered', async () => {
    const { [SHARED_DYNAMODB_ENV]: _shared, ...env } = process.env;
    const child = spawn('script', ['-qec', 'npx tsx local/main.ts --messages 60', '/dev/null'], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: { ...env, COLUMNS: '120', LINES: '40' },
    });
    let screen = '';
    child.stdout.on('data', (chunk: Buffer) => {
      screen += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const deadline = Date.now() + scaled(150_000);
    while (!screen.includes(PROMPT) && Date.now() < deadline) await sleep(100);
    expect(screen).toContain(PROMPT);
    await sleep(2_000);
    const afterPrompt = screen.slice(screen.lastIndexOf(PROMPT) + PROMPT.length);
    child.stdin.write('n\r');
    const code = await exited;
    // Only readline's own cursor placement after the question: no bar redrawn over it.
    expect(afterPrompt.replaceAll(String.fromCharCode(27), '<ESC>')).toMatch(/^(<ESC>\[\d+G)?$/);
    expect(code).toBe(1);
    expect(screen).toMatch(/Rejected/);
  });
});
