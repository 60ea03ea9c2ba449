import { spawnSync } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import { startMain } from '../../local/start-main.js';

/** Runs `npm start`'s entry point in a process of its own: the exit code is the process's. */
function spawnStart(...args: string[]) {
  const out = spawnSync(process.execPath, ['--import', 'tsx', 'local/main.ts', ...args], {
    encoding: 'utf8',
    env: { ...process.env, FORCE_COLOR: '0' },
  });
  return { status: out.status, stderr: out.stderr, stdout: out.stdout };
}

/**
 * Runs what the entry point runs (local/start-main.ts) in this worker, capturing what it writes:
 * a spawn costs a second or more of CPU (tsx, the imports), and every case but the first is about
 * the flags, not the process.
 */
async function start(...args: string[]) {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const status = await startMain(args);
    return { status, stderr, stdout };
  } finally {
    vi.restoreAllMocks();
  }
}

describe('npm start, as a process', () => {
  it('exits 2 on a bad flag, naming it and printing the usage, before starting anything', () => {
    const out = spawnStart('--frobnicate');
    expect(out.status).toBe(2);
    expect(out.stderr).toContain('--frobnicate: unknown flag');
    expect(out.stderr).toContain('usage: npm start');
    expect(out.stdout).not.toContain('Starting the local stack');
  });
});

describe('npm start refuses bad arguments with exit 2, naming the flag, before starting anything', () => {
  it.each([
    [['--approve', '--reject'], '--approve, --reject and --approve-via: give at most one'],
    [['--approve-via', 'bogus'], '--approve-via: unknown approver "bogus"'],
    [['--scenario', 'healthy', '--scenario', 'bogus'], '--scenario: given twice'],
    // Checked once the scenarios are loaded, still before any stack starts.
    [['--scenario', 'bogus'], '--scenario: unknown scenario "bogus"'],
    [['--json', '--json'], '--json: given twice'],
    [['--frobnicate'], '--frobnicate: unknown flag'],
    // One parser for every numeric flag (F5): plain decimal integers only, within the range.
    [['--messages', '1e3'], '--messages: must be an integer 20..100000, got "1e3"'],
    [['--messages', ' 50 '], '--messages: must be an integer 20..100000, got " 50 "'],
    [['--messages', '0x10'], '--messages: must be an integer 20..100000, got "0x10"'],
    [['--messages', '50.0'], '--messages: must be an integer 20..100000, got "50.0"'],
    [['--messages', '10'], '--messages: must be an integer 20..100000, got "10"'],
    [['--dlq-depth', '100001'], '--dlq-depth: must be an integer 20..100000, got "100001"'],
    [['--dlq-depth', '5e4'], '--dlq-depth: must be an integer 20..100000, got "5e4"'],
    [['--messages', '100', '--dlq-depth', '100'], '--dlq-depth: give either --messages'],
    // --dlq-depth seeds a standard SQS DLQ only: an origin's DLQ ignored it, a FIFO DLQ failed mid-run.
    [
      ['--scenario', 'eventbridge-dlq', '--dlq-depth', '30'],
      '--dlq-depth: scenario eventbridge-dlq fills its DLQ through its eventbridge origin',
    ],
    [
      ['--scenario', 'fifo-deep-group', '--dlq-depth', '30'],
      '--dlq-depth: scenario fifo-deep-group fills its DLQ through its FIFO message groups',
    ],
  ])('%j', async (args, message) => {
    const out = await start(...args);
    expect(out.status).toBe(2);
    expect(out.stderr).toContain(message);
    expect(out.stderr).toContain('usage: npm start');
    expect(out.stdout).not.toContain('Starting the local stack');
  });
});
