/**
 * The crash matrix's command line and cell plan (scripts/crash-matrix.ts): which cells a run (or
 * one shard of it) takes from the call sites of the discovery run. Pure, so the selection is tested
 * without a stack (test/unit/crash-matrix-plan.test.ts).
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { intArg } from '../../cli/args.js';

/** A call site the discovery run reached. */
export interface MatrixSite {
  functionFolder: string;
  command: string;
  site: string;
}

export type CrashMode = 'retry' | 'restart';

/** One cell: a crash right after `site`, recovered by `mode`. */
export interface MatrixCell {
  id: string;
  crash: { functionFolder: string; site: string; mode: CrashMode };
  command: string;
}

/** Parsed options of `npm run crash-matrix`. */
export interface MatrixOptions {
  only?: string[];
  site?: string;
  modes: CrashMode[];
  /** Cells run at once in one process. */
  concurrency: number;
  /** This process runs the cells whose index (in the sorted plan) is `index - 1` modulo `count`. */
  shard?: { index: number; count: number };
  /** Spawn this many processes, shard `k/parallel` each, and merge their summaries. */
  parallel?: number;
  /** One site per function (a write where there is one), both crash kinds: the CI subset. */
  representative: boolean;
  list: boolean;
  verbose: boolean;
}

/** `K/N` with 1 <= K <= N <= 64. */
export function shardArg(value: string): { index: number; count: number } {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(value);
  const index = Number(match?.[1]);
  const count = Number(match?.[2]);
  if (!match || count < 1 || count > 64 || index < 1 || index > count)
    throw new InvalidArgumentError(`must be K/N with 1 <= K <= N <= 64, got "${value}"`);
  return { index, count };
}

function modesArg(value: string): CrashMode[] {
  const modes = value.split(',').map((m) => m.trim());
  const bad = modes.filter((m) => m !== 'retry' && m !== 'restart');
  if (bad.length > 0 || modes.length === 0)
    throw new InvalidArgumentError(`must be retry, restart or retry,restart, got "${value}"`);
  return [...new Set(modes)] as CrashMode[];
}

function listArg(value: string): string[] {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new InvalidArgumentError(`must name at least one function, got "${value}"`);
  return items;
}

/**
 * Parses the matrix's arguments (without node and the script path).
 * @throws CommanderError (exit code 2 for a bad value or an unknown option; its message names the
 *   flag) — commander has already written it to stderr.
 */
export function parseMatrixArgs(argv: readonly string[]): MatrixOptions {
  const program = new Command('crash-matrix')
    .exitOverride()
    .allowExcessArguments(false)
    .option('--only <functions>', 'the cells of these function folders (comma-separated)', listArg)
    .option('--site <text>', 'the cells whose "<command> <path:line>" contains this text')
    .addOption(
      new Option('--mode <modes>', 'recovery modes: retry, restart')
        .argParser(modesArg)
        .default(['retry', 'restart']),
    )
    .option('--concurrency <n>', 'cells at once in one process', intArg(1, 16), 3)
    .option('--shard <K/N>', 'run the K-th of N interleaved slices of the cells', shardArg)
    .option('--parallel <n>', 'run as n processes (shards 1/n..n/n) and merge their summaries', intArg(1, 8))
    .option('--representative', 'one site per function (a write where there is one), both crash kinds', false)
    .option('--list', 'print the call sites of the discovery run and stop', false)
    .option('--verbose', 'dump the report and physical counts of a failed cell', false);
  try {
    program.parse([...argv], { from: 'user' });
  } catch (error) {
    const e = error as { exitCode?: number; code?: string };
    if (e.code !== 'commander.helpDisplayed' && e.code !== 'commander.help') e.exitCode = 2;
    throw error;
  }
  const o = program.opts();
  if (o.shard && o.parallel) {
    const message = 'error: --shard and --parallel cannot be combined (--parallel runs every shard)';
    process.stderr.write(`${message}\n`);
    throw new CommanderError(2, 'crash-matrix.conflictingOptions', message);
  }
  return {
    ...(o.only ? { only: o.only as string[] } : {}),
    ...(o.site ? { site: o.site as string } : {}),
    modes: o.mode as CrashMode[],
    concurrency: o.concurrency as number,
    ...(o.shard ? { shard: o.shard as { index: number; count: number } } : {}),
    ...(o.parallel ? { parallel: o.parallel as number } : {}),
    representative: o.representative as boolean,
    list: o.list as boolean,
    verbose: o.verbose as boolean,
  };
}

/** The distinct call sites of a discovery run's calls, sorted (so every process plans alike). */
export function distinctSites(calls: readonly MatrixSite[]): MatrixSite[] {
  const sites = new Map<string, MatrixSite>();
  for (const c of calls) {
    const key = `${c.functionFolder}\t${c.site}`;
    if (!sites.has(key))
      sites.set(key, { functionFolder: c.functionFolder, command: c.command, site: c.site });
  }
  return [...sites.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, s]) => s);
}

const READS = /^(Get|BatchGet|Describe|List|Receive|Query|Scan)/;

/**
 * The cells of `sites` that `options` select, in plan order, then this shard's slice. The
 * representative subset takes, per function, its first write site (send, delete, put, update,
 * transact, start...) or else its first site: the crashes that leave the most behind.
 */
export function planCells(sites: readonly MatrixSite[], options: MatrixOptions): MatrixCell[] {
  let chosen = sites.filter(
    (s) =>
      (!options.only || options.only.includes(s.functionFolder)) &&
      (!options.site || `${s.command} ${s.site}`.includes(options.site)),
  );
  if (options.representative) {
    const byFunction = new Map<string, MatrixSite>();
    for (const s of chosen) {
      const current = byFunction.get(s.functionFolder);
      if (!current || (READS.test(current.command) && !READS.test(s.command)))
        byFunction.set(s.functionFolder, s);
    }
    chosen = chosen.filter((s) => byFunction.get(s.functionFolder) === s);
  }
  const cells = chosen.flatMap((s) =>
    options.modes.map((mode) => ({
      crash: { functionFolder: s.functionFolder, site: s.site, mode },
      command: s.command,
    })),
  );
  return cells
    .map((c, i) => ({ ...c, id: `cm-${i}-${c.crash.mode}` }))
    .filter((_, i) => !options.shard || i % options.shard.count === options.shard.index - 1);
}
