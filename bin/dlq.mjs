#!/usr/bin/env node
// The `dlq` binary: the CLI built to JavaScript by `npm ci` (the `prepare` script,
// scripts/build-cli.ts). docs/cli.md lists the commands.
try {
  await import('../dist/cli/dlq.mjs');
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('dist/cli/dlq.mjs'))
    throw error;
  process.stderr.write(
    'dlq: the CLI is not built: run `npm ci` (or `npm run build:cli`) in the repository\n',
  );
  process.exitCode = 1;
}
