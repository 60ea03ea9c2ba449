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
    [['--json', '--json'], '--json: given twice'],
    [['--frobnicate'], '--frobnicate: unknown flag'],
  ])('%j', (args, message) => {
    const out = start(...args);
    expect(out.status).toBe(2);
    expect(out.stderr).toContain(message);
    expect(out.stderr).toContain('usage: npm start');
    expect(out.stdout).not.toContain('Starting the local stack');
  });
});
