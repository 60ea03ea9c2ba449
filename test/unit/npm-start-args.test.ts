import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** Runs `npm start`'s entry point with arguments; every case here must exit before any stack starts. */
function start(...args: string[]) {
  const out = spawnSync(process.execPath, ['--import', 'tsx', 'local/main.ts', ...args], {
    encoding: 'utf8',
    env: { ...process.env, FORCE_COLOR: '0' },
  });
  return { status: out.status, stderr: out.stderr, stdout: out.stdout };
}

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
  ])('%j', (args, message) => {
    const out = start(...args);
    expect(out.status).toBe(2);
    expect(out.stderr).toContain(message);
    expect(out.stderr).toContain('usage: npm start');
    expect(out.stdout).not.toContain('Starting the local stack');
  });
});
