import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { distinctSites, type MatrixSite, parseMatrixArgs, planCells } from '../crash/matrix-plan.js';

const site = (functionFolder: string, command: string, line: number): MatrixSite => ({
  functionFolder,
  command,
  site: `functions/shared/x.ts:${line}`,
});
// As a discovery run reports them: repeated calls, no order.
const calls = [
  site('triage', 'ReceiveMessageCommand', 20),
  site('park', 'SendMessageCommand', 12),
  site('park', 'ReceiveMessageCommand', 10),
  site('triage', 'GetItemCommand', 3),
  site('park', 'SendMessageCommand', 12),
  site('triage', 'PutItemCommand', 40),
  site('park', 'DeleteMessageCommand', 14),
];

describe('the crash matrix plan', () => {
  it('takes every distinct call site once, sorted, so every shard process plans the same cells', () => {
    const sites = distinctSites(calls);
    expect(sites.map((s) => `${s.functionFolder} ${s.site}`)).toEqual([
      'park functions/shared/x.ts:10',
      'park functions/shared/x.ts:12',
      'park functions/shared/x.ts:14',
      'triage functions/shared/x.ts:20',
      'triage functions/shared/x.ts:3',
      'triage functions/shared/x.ts:40',
    ]);
    expect(distinctSites([...calls].reverse())).toEqual(sites);
  });

  it('splits the cells into shards that together are every cell exactly once', () => {
    const sites = distinctSites(calls);
    const all = planCells(sites, parseMatrixArgs([]));
    expect(all).toHaveLength(12);
    const shards = [1, 2, 3, 4, 5].map((k) => planCells(sites, parseMatrixArgs(['--shard', `${k}/5`])));
    expect(shards.map((s) => s.length)).toEqual([3, 3, 2, 2, 2]);
    expect(
      shards
        .flat()
        .map((c) => c.id)
        .sort(),
    ).toEqual(all.map((c) => c.id).sort());
  });

  it('represents each function by one write site (its first read site only when it writes nothing), in both crash kinds', () => {
    const cells = planCells(distinctSites(calls), parseMatrixArgs(['--representative']));
    expect(cells.map((c) => `${c.crash.functionFolder} ${c.command} ${c.crash.mode}`)).toEqual([
      'park SendMessageCommand retry',
      'park SendMessageCommand restart',
      'triage PutItemCommand retry',
      'triage PutItemCommand restart',
    ]);
    const readsOnly = planCells(
      [site('verify', 'GetQueueAttributesCommand', 5)],
      parseMatrixArgs(['--representative']),
    );
    expect(readsOnly.map((c) => c.command)).toEqual([
      'GetQueueAttributesCommand',
      'GetQueueAttributesCommand',
    ]);
  });

  it('filters by function and recovery mode', () => {
    const cells = planCells(distinctSites(calls), parseMatrixArgs(['--only', 'triage', '--mode', 'restart']));
    expect(cells.map((c) => `${c.crash.functionFolder} ${c.crash.mode}`)).toEqual([
      'triage restart',
      'triage restart',
      'triage restart',
    ]);
  });
});

describe('npm run crash-matrix refuses bad options with exit 2, naming the flag, before starting anything', () => {
  it.each([
    [['--shard', '3/2'], "option '--shard <K/N>' argument '3/2' is invalid"],
    [['--shard', '0/2'], "option '--shard <K/N>' argument '0/2' is invalid"],
    [['--shard', 'half'], "option '--shard <K/N>' argument 'half' is invalid"],
    [['--parallel', '0'], "option '--parallel <n>' argument '0' is invalid"],
    [['--concurrency', 'many'], "option '--concurrency <n>' argument 'many' is invalid"],
    [['--mode', 'reboot'], "option '--mode <modes>' argument 'reboot' is invalid"],
    [['--shard', '1/2', '--parallel', '2'], '--shard and --parallel cannot be combined'],
    [['--frobnicate'], "unknown option '--frobnicate'"],
  ])('%j', (args, message) => {
    const out = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/crash-matrix.ts', ...args], {
      encoding: 'utf8',
    });
    expect(out.status).toBe(2);
    expect(out.stderr).toContain(message);
    expect(out.stdout).toBe('');
  });
});
