/**
 * `npm start`: the main job on the local stack, end to end, with no AWS account, as one of the
 * named fault scenarios (local/demo/scenarios/; the default is the healthy run).
 *
 * An `orders` queue's consumer fails on poison payloads and, during a dependency outage, on healthy
 * messages too; SQS dead-letters them; the DLQ alarm fires; the real triage handler stores an
 * envelope per message and starts the redrive workflow (the real ASL, the real task handlers); the
 * workflow asks for approval; the scenario decides what happens next (the fix is deployed, or the
 * consumer stays broken, breaks again, late poison arrives...); the run ends with a table of where
 * every message ended, the exposure against its bound, and whether the run ended as expected.
 *
 * Flags: `--scenario NAME` (`list` lists them), `--json` (the report as one JSON object on the last
 * line), `--approve` / `--reject` / `--approve-via <name>` (default: prompt on a terminal,
 * auto-approve otherwise), `--messages <n>`, `--verbose` (handler logs), `--help`. Exit code 0 when
 * the run ended as its scenario expects (an expected halt is a pass), 1 when it did not, 2 for a
 * bad argument.
 *
 * This entry point checks the flags first (local/start-main.ts: local/start-args.ts, no AWS SDK or
 * stack imported) and loads the run (local/start-run.ts) only when they pass.
 */
import './demo/env.js';
import { startMain } from './start-main.js';

startMain(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`npm start failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
