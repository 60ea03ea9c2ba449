/**
 * `npm run big-incident [-- N]`: the big incident end to end, the way a user runs it:
 * `npm start -- --dlq-depth N --json` (default N = 100,000) in a child process, with its wall time
 * and peak memory, then the checks of issue 10's "Done when": every dead-lettered message
 * inventoried, nothing lost, the counts adding up, the run ending `Done`.
 *
 * Memory: the peak resident set of the `npm start` process (VmHWM; on this stack it also holds the
 * in-process SQS stand-in and therefore every message of the DLQ), and the peak of that process
 * and its children together (DynamoDB Local's JVM), sampled every second from /proc (Linux only;
 * elsewhere only the wall time is reported). bench/big-incident measures the pipeline's own memory
 * apart from the stand-in.
 *
 * Not part of `npm test`: a 100,000-message run takes tens of minutes on a 2-core machine.
 *
 * Usage: npm run big-incident [-- N]   (prints one JSON line last; exit 1 when a check fails)
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const N = Number(process.argv[2] ?? 100_000);
if (!Number.isInteger(N) || N < 20 || N > 100_000) {
  process.stderr.write(`N: must be an integer 20..100000, got "${process.argv[2]}"\n`);
  process.exit(2);
}

/** A /proc/<pid>/status field in bytes (`VmRSS`, `VmHWM`), or 0 when it cannot be read. */
function statusBytes(pid: number, field: string): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field}:`));
    return line ? Number(line.replace(/\D+/g, '')) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** `pid` and every process descended from it (from /proc/<pid>/stat's parent ids). */
function processTree(pid: number): number[] {
  const parents = new Map<number, number>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return [pid];
  }
  for (const e of entries) {
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(e), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++)
    for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child);
  return tree;
}

const main = fileURLToPath(new URL('../local/main.ts', import.meta.url));
const startedAt = performance.now();
const child = spawn(process.execPath, ['--import', 'tsx', main, '--dlq-depth', String(N), '--json'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
child.stdout.on('data', (chunk: Buffer) => {
  out += chunk.toString();
});
let peakMain = 0;
let peakTree = 0;
const sampler = setInterval(() => {
  if (!child.pid) return;
  peakMain = Math.max(peakMain, statusBytes(child.pid, 'VmHWM'));
  const tree = processTree(child.pid).reduce((n, pid) => n + statusBytes(pid, 'VmRSS'), 0);
  peakTree = Math.max(peakTree, tree);
}, 1000);
const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
clearInterval(sampler);
const wallSeconds = (performance.now() - startedAt) / 1000;

const last = out.trim().split('\n').at(-1) ?? '';
let report: Record<string, unknown> | undefined;
try {
  report = JSON.parse(last) as Record<string, unknown>;
} catch {
  report = undefined;
}
const problems: string[] = [];
if (!report) problems.push(`npm start printed no JSON report (exit ${code})`);
else {
  if (report.deadLettered !== N) problems.push(`dead-lettered ${String(report.deadLettered)}, expected ${N}`);
  if (report.inventoried !== report.deadLettered)
    problems.push(
      `inventoried ${String(report.inventoried)} of ${String(report.deadLettered)} dead-lettered`,
    );
  if (report.missing !== 0) problems.push(`missing ${String(report.missing)}`);
  if (report.countsAddUp !== true) problems.push('the counts do not add up');
  if (report.outcome !== 'Done') problems.push(`ended ${String(report.outcome)}, expected Done`);
}
const mb = (bytes: number) => Math.round(bytes / 1e6);
const summary = {
  messages: N,
  wallSeconds: Math.round(wallSeconds),
  peakRssMb: mb(peakMain),
  peakRssWithChildrenMb: mb(peakTree),
  exitCode: code,
  ...(report
    ? Object.fromEntries(
        [
          'outcome',
          'deadLettered',
          'inventoried',
          'redriven',
          'parked',
          'discarded',
          'remaining',
          'missing',
          'countsAddUp',
          'executions',
          'stateTransitions',
          'historyEvents',
          'largestPayloadBytes',
          'inventoryInvocations',
          'durationMs',
        ].map((k) => [k, report[k]]),
      )
    : {}),
  problems,
};
process.stdout.write(`${JSON.stringify(summary)}\n`);
process.exit(problems.length === 0 ? 0 : 1);
