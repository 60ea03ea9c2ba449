/**
 * What `npm start` (local/main.ts) runs: checks the flags first (local/start-args.ts, no AWS SDK or
 * stack imported) and loads the run (local/start-run.ts) only when they pass. Apart from
 * local/main.ts so a test can run it in-process (test/unit/npm-start-args.test.ts).
 */
import { parseStartArgs, type StartArgs, USAGE, UsageError } from './start-args.js';

/**
 * Runs `npm start` with `argv` (without the node and script paths).
 *
 * @returns the exit code: 0 the run ended as its scenario expects, 1 it did not, 2 a bad argument
 *   (its message and the usage written to stderr, nothing started).
 */
export async function startMain(argv: readonly string[]): Promise<number> {
  let args: StartArgs;
  try {
    args = parseStartArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    return 2;
  }
  const { runStart } = await import('./start-run.js');
  return runStart(args, argv);
}
