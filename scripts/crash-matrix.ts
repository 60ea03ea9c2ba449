/**
 * The crash matrix (issue 9): a crash right after each AWS call site of triage and of every
 * workflow function, each recovered once by a Lambda retry and once by a console restart, on the
 * local stack with the real handlers and the real ASL. Every cell must end with nothing lost, no
 * unrecorded duplicate, and a report equal to the physical counts (test/crash/crash-cell.ts).
 *
 * The call sites come from a discovery run without faults: every distinct place in `functions/`
 * (or `packages/`) that called AWS, per function, sorted, so every shard plans the same cells.
 * `.ci/run` runs the whole matrix after `npm test` with `--parallel 2 --concurrency 5` (162 cells,
 * 18 min; docs/redrive-workflow.md has the numbers).
 *
 *   npm run crash-matrix                          # every cell
 *   npm run crash-matrix -- --only park,triage    # the cells of some functions
 *   npm run crash-matrix -- --mode retry          # one recovery mode
 *   npm run crash-matrix -- --concurrency 2       # cells at once in one process (default 3)
 *   npm run crash-matrix -- --shard 2/4           # the 2nd of 4 interleaved slices of the cells
 *   npm run crash-matrix -- --parallel 2          # 2 processes (shards 1/2, 2/2), summaries merged
 *   npm run crash-matrix -- --representative      # one write site per function, both kinds
 *   npm run crash-matrix -- --list                # the call sites of the discovery run, and stop
 *   npm run crash-matrix -- --site sqs-queues.ts:215 --verbose   # matching sites; dump failed cells
 *
 * Exit 0 when every cell passed, 1 otherwise, 2 for a bad option (named); the last line of stdout is
 * the summary as JSON.
 */
import { spawn } from 'node:child_process';
import { type MatrixCell, parseMatrixArgs } from '../test/crash/matrix-plan.js';

let options: ReturnType<typeof parseMatrixArgs>;
try {
  options = parseMatrixArgs(process.argv.slice(2));
} catch (error) {
  process.exit((error as { exitCode?: number }).exitCode ?? 2);
}

interface Summary {
  sites: number;
  cells: number;
  passed: number;
  failed: Array<{
    function: string | undefined;
    command: string;
    site: string | undefined;
    mode: string | undefined;
    problems: string[];
  }>;
  minutes: number;
}
const startedAt = Date.now();
const minutesSince = (t: number) => Math.round((Date.now() - t) / 6000) / 10;

if (options.parallel && options.parallel > 1) {
  // Each child is a whole matrix process (its own local stack and discovery run) on one shard.
  const argv = process.argv.slice(2);
  const at = argv.indexOf('--parallel');
  const rest = [...argv.slice(0, at), ...argv.slice(at + 2)];
  const count = options.parallel;
  const summaries = await Promise.all(
    Array.from({ length: count }, (_, i) => {
      const child = spawn(
        process.execPath,
        [...process.execArgv, process.argv[1] as string, ...rest, '--shard', `${i + 1}/${count}`],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        for (const line of d.toString().split('\n'))
          if (line) process.stderr.write(`[${i + 1}/${count}] ${line}\n`);
      });
      return new Promise<Summary | undefined>((resolve) =>
        child.on('close', () => {
          try {
            resolve(JSON.parse(out.trim().split('\n').at(-1) ?? '') as Summary);
          } catch {
            resolve(undefined);
          }
        }),
      );
    }),
  );
  const done = summaries.filter((s): s is Summary => s !== undefined);
  const summary = {
    shards: count,
    sites: Math.max(0, ...done.map((s) => s.sites)),
    cells: done.reduce((n, s) => n + s.cells, 0),
    passed: done.reduce((n, s) => n + s.passed, 0),
    failed: done.flatMap((s) => s.failed),
    shardsWithoutSummary: count - done.length,
    minutes: minutesSince(startedAt),
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  process.exit(summary.failed.length === 0 && done.length === count ? 0 : 1);
}

await import('../test/crash/env.js');
const { startLocalStack } = await import('../local/stack.js');
const { runCell } = await import('../test/crash/crash-cell.js');
const { distinctSites, planCells } = await import('../test/crash/matrix-plan.js');
type CellOutcome = Awaited<ReturnType<typeof runCell>>;

const stack = await startLocalStack();
try {
  const discovery = await runCell({ id: 'cm-discover' });
  if (discovery.problems.length > 0)
    throw new Error(`the discovery run (no faults) failed: ${discovery.problems.join('; ')}`);
  const sites = distinctSites(discovery.calls);
  if (options.list) {
    for (const s of sites) process.stdout.write(`${s.functionFolder}\t${s.command}\t${s.site}\n`);
    process.exit(0);
  }
  const cells: MatrixCell[] = planCells(sites, options);
  process.stderr.write(
    `${sites.length} call sites in ${new Set(sites.map((s) => s.functionFolder)).size} functions; ${cells.length} cells${options.shard ? ` (shard ${options.shard.index}/${options.shard.count})` : ''}\n`,
  );
  const outcomes: Array<CellOutcome & { command: string }> = [];
  let next = 0;
  const worker = async () => {
    while (next < cells.length) {
      const cell = cells[next++] as MatrixCell;
      const outcome = await runCell(cell);
      outcomes.push({ ...outcome, command: cell.command });
      const verdict = outcome.problems.length === 0 ? 'pass' : `FAIL: ${outcome.problems.join('; ')}`;
      if (outcome.problems.length > 0 && options.verbose)
        process.stderr.write(
          `${JSON.stringify({ report: outcome.report, physical: outcome.physical, paths: outcome.executions.map((e) => [e.status, e.path.join(' > ')]) }, (_, v) => (v instanceof Map ? Object.fromEntries(v) : v))}\n`,
        );
      process.stderr.write(
        `${cell.crash.functionFolder} ${cell.command} ${cell.crash.site} [${cell.crash.mode}] ${(outcome.durationMs / 1000).toFixed(0)} s: ${verdict}\n`,
      );
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const failed = outcomes.filter((o) => o.problems.length > 0);
  const summary: Summary = {
    sites: new Set(cells.map((c) => `${c.crash.functionFolder} ${c.crash.site}`)).size,
    cells: outcomes.length,
    passed: outcomes.length - failed.length,
    failed: failed.map((o) => ({
      function: o.spec.crash?.functionFolder,
      command: o.command,
      site: o.spec.crash?.site,
      mode: o.spec.crash?.mode,
      problems: o.problems,
    })),
    minutes: minutesSince(startedAt),
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  process.exitCode = failed.length === 0 ? 0 : 1;
} finally {
  await stack.stop();
}
