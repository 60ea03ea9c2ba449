/**
 * Builds the `dlq` CLI to JavaScript, `dist/cli/dlq.mjs` (one ES module, dependencies left to
 * node_modules), so the binary starts without compiling TypeScript. Run by the root package's
 * `prepare` script, hence by `npm ci`; docs/cli.md.
 *
 * Usage: npx tsx scripts/build-cli.ts
 */
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Where the binary (bin/dlq.mjs) finds the built CLI. */
export const CLI_OUTFILE = 'dist/cli/dlq.mjs';

/**
 * The esbuild options of the CLI: every `node_modules` package external (the root package's
 * dependencies, installed beside it), our sources and the `#…` subpath imports bundled.
 */
export const CLI_BUILD: BuildOptions = {
  absWorkingDir: ROOT,
  entryPoints: ['cli/bin.ts'],
  outfile: CLI_OUTFILE,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await build(CLI_BUILD);
