#!/usr/bin/env node
// The `dlq` binary: runs cli/main.ts through tsx (a dependency), so the CLI is the same source the
// tests run. docs/cli.md lists the commands.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../cli/main.ts');
const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  isTTY: process.stderr.isTTY === true,
});
process.exitCode = code;
