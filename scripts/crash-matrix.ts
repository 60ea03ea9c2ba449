/**
 * The crash matrix (issue 9): a crash right after each AWS call site of triage and of every
 * workflow function, each recovered once by a Lambda retry and once by a console restart, on the
 * local stack with the real handlers and the real ASL. Every cell must end with nothing lost, no
 * unrecorded duplicate, and a report equal to the physical counts (test/crash/crash-cell.ts).
 *
 * The call sites come from a discovery run without faults: every distinct place in `functions/`
 * (or `packages/`) that called AWS, per function. `.ci/run` runs this after `npm test`.
 *
 *   npm run crash-matrix                          # every cell
 *   npm run crash-matrix -- --only park,triage    # the cells of some functions
 *   npm run crash-matrix -- --mode retry          # one recovery mode
 *   npm run crash-matrix -- --concurrency 2       # cells at once (default 3)
 *   npm run crash-matrix -- --list                # the call sites of the discovery run, and stop
 *   npm run crash-matrix -- --site sqs-queues.ts:215 --verbose   # matching sites; dump failed cells
 *
 * Exit 0 when every cell passed, 1 otherwise; the last line of stdout is the summary as JSON.
 */
await import('../test/crash/env.js');

const { startLocalStack } = await import('../local/stack.js');
const { runCell } = await import('../test/crash/crash-cell.js');
type CellOutcome = Awaited<ReturnType<typeof runCell>>;

function flag(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

const only = flag('--only')?.split(',');
const siteFilter = flag('--site');
const modes = (flag('--mode')?.split(',') ?? ['retry', 'restart']) as Array<'retry' | 'restart'>;
const concurrency = Number(flag('--concurrency') ?? 3);

const stack = await startLocalStack();
const startedAt = Date.now();
try {
  const discovery = await runCell({ id: 'cm-discover' });
  if (discovery.problems.length > 0)
    throw new Error(`the discovery run (no faults) failed: ${discovery.problems.join('; ')}`);
  const sites: Array<{ functionFolder: string; site: string; command: string }> = [];
  for (const call of discovery.calls)
    if (!sites.some((s) => s.functionFolder === call.functionFolder && s.site === call.site))
      sites.push(call);
  if (process.argv.includes('--list')) {
    for (const s of sites) process.stdout.write(`${s.functionFolder}\t${s.command}\t${s.site}\n`);
    process.exit(0);
  }
  const chosen = sites.filter(
    (s) =>
      (!only || only.includes(s.functionFolder)) &&
      (!siteFilter || `${s.command} ${s.site}`.includes(siteFilter)),
  );
  const cells = chosen.flatMap((s, i) =>
    modes.map((mode) => ({
      id: `cm-${i}-${mode}`,
      crash: { functionFolder: s.functionFolder, site: s.site, mode },
      command: s.command,
    })),
  );
  process.stderr.write(
    `${sites.length} call sites in ${new Set(sites.map((s) => s.functionFolder)).size} functions; ${cells.length} cells\n`,
  );
  const outcomes: Array<CellOutcome & { command: string }> = [];
  let next = 0;
  const worker = async () => {
    while (next < cells.length) {
      const cell = cells[next++] as (typeof cells)[number];
      const outcome = await runCell(cell);
      outcomes.push({ ...outcome, command: cell.command });
      const verdict = outcome.problems.length === 0 ? 'pass' : `FAIL: ${outcome.problems.join('; ')}`;
      if (outcome.problems.length > 0 && process.argv.includes('--verbose'))
        process.stderr.write(
          `${JSON.stringify({ report: outcome.report, physical: outcome.physical, paths: outcome.executions.map((e) => [e.status, e.path.join(' > ')]) }, (_, v) => (v instanceof Map ? Object.fromEntries(v) : v))}\n`,
        );
      process.stderr.write(
        `${cell.crash.functionFolder} ${cell.command} ${cell.crash.site} [${cell.crash.mode}] ${(outcome.durationMs / 1000).toFixed(0)} s: ${verdict}\n`,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  const failed = outcomes.filter((o) => o.problems.length > 0);
  const summary = {
    sites: chosen.length,
    cells: outcomes.length,
    passed: outcomes.length - failed.length,
    failed: failed.map((o) => ({
      function: o.spec.crash?.functionFolder,
      command: o.command,
      site: o.spec.crash?.site,
      mode: o.spec.crash?.mode,
      problems: o.problems,
    })),
    minutes: Math.round((Date.now() - startedAt) / 6000) / 10,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  process.exitCode = failed.length === 0 ? 0 : 1;
} finally {
  await stack.stop();
}
