/**
 * The `dlq` binary's entry: runs the CLI on the process's arguments and streams. Built to
 * `dist/cli/dlq.mjs` by scripts/build-cli.ts (the root package's `prepare`); docs/cli.md.
 */
import { runCli } from './main.js';

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  isTTY: process.stderr.isTTY === true,
});
