/**
 * How every pipeline function is bundled: one set of `NodejsFunction` bundling options, used by
 * the stack, and the same options as esbuild build options for `bench/bundles` and the tests, so
 * what is measured is what is deployed (a test compares the two outputs byte for byte).
 *
 * Choices, with what they weigh (measured on the triage bundle, minified; `npm run bench:bundles`
 * prints the current sizes):
 * - ESM (`index.mjs`) for nodejs22.x, `module` before `main` so packages resolve to their ES
 *   builds, which esbuild tree-shakes; a `createRequire` banner for CommonJS dependencies that
 *   call `require()` on Node built-ins.
 * - The AWS SDK is bundled, not taken from the runtime: the versions pinned in package.json are
 *   the ones the tests ran.
 * - zod: Lambda code uses `zod/mini` through `#platform/zod.js`, imported as a namespace (Biome
 *   enforces both): -70 KB against classic zod schemas (whose methods bring every schema type
 *   and the JSON Schema generator), which themselves save 360 KB against
 *   `import { z } from 'zod'` (its named export keeps every locale).
 * - No code splitting (CDK's `NodejsFunction` writes one `--outfile`): a module reached only
 *   through `await import()` (the S3, Lambda and IAM clients, `@slack/web-api`, the credential
 *   chain's SSO and ini links) is in the file but wrapped, and evaluated on first use only.
 *   `test/infra/bundling.test.ts` holds each function's statically imported bytes to a baseline.
 * - What weighs what, and why the SDK stays bundled: docs/bundles.md.
 * - `keepNames` stays on although it costs about 6%: the SDK's `ServiceException` matches
 *   `instanceof` by constructor name, which minified names would break.
 * - Source maps without sources content, loaded by `NODE_OPTIONS=--enable-source-maps`.
 * - The licences of the bundled packages: `THIRD-PARTY-LICENSES.txt` beside `index.mjs`, written
 *   from the metafile after bundling ({@link ./bundle-licences.ts}); the metafile is then removed.
 *
 * @see https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.aws_lambda_nodejs.BundlingOptions.html
 * @see https://esbuild.github.io/api/
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { aws_lambda_nodejs as nodejs } from 'aws-cdk-lib';
import type { BuildOptions } from 'esbuild';

/** The repository root (the NodejsFunction project root: package.json and package-lock.json). */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Lets CommonJS dependencies call `require()` inside an ES module bundle. */
const REQUIRE_BANNER =
  "import { createRequire as __dlqCreateRequire } from 'node:module'; const require = __dlqCreateRequire(import.meta.url);";

/** A word quoted for the POSIX shell CDK runs the command hooks in. */
const shellQuote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/** How this Node runs a TypeScript file: its own type stripping (0.3 s CPU), else tsx (0.5 s). */
const RUN_TS = process.features.typescript ? ['--disable-warning=ExperimentalWarning'] : ['--import', 'tsx'];

/** Writes the bundle's third-party licence list from its metafile (CDK runs it in REPO_ROOT). */
const LICENCE_HOOKS: nodejs.ICommandHooks = {
  beforeBundling: () => [],
  beforeInstall: () => [],
  afterBundling: (_inputDir, outputDir) => [
    [process.execPath, ...RUN_TS, 'infra/bundle-licences.ts', outputDir].map(shellQuote).join(' '),
  ],
};

/** The bundling options of every pipeline function (see the file header). */
export const PIPELINE_BUNDLING: nodejs.BundlingOptions = {
  forceDockerBundling: false,
  format: nodejs.OutputFormat.ESM,
  target: 'node22',
  mainFields: ['module', 'main'],
  banner: REQUIRE_BANNER,
  externalModules: [],
  minify: true,
  keepNames: true,
  sourceMap: true,
  sourcesContent: false,
  metafile: true,
  commandHooks: LICENCE_HOOKS,
};

/** Bundling options {@link esbuildOptionsOf} knows how to translate; any other one is refused. */
const TRANSLATED = new Set<keyof nodejs.BundlingOptions>([
  'forceDockerBundling',
  'format',
  'target',
  'mainFields',
  'banner',
  'externalModules',
  'minify',
  'keepNames',
  'sourceMap',
  'sourcesContent',
  'esbuildArgs',
  'metafile',
  // Runs after esbuild; it adds the licence list beside the bundle and leaves its bytes alone.
  'commandHooks',
]);

/**
 * The esbuild build options CDK's local bundling runs for `bundling` (the flags of its
 * `esbuild --bundle <entry> ...` command, same working directory), writing `outfile`.
 *
 * @param entry - absolute path of the handler (`functions/<name>/handler.ts`).
 * @param outfile - absolute path of the bundle to write (`.../index.mjs` for ESM).
 * @throws Error naming a bundling option this translation does not cover, so the bench and the
 *   tests never measure something other than what the stack deploys.
 * @see https://github.com/aws/aws-cdk/blob/main/packages/aws-cdk-lib/aws-lambda-nodejs/lib/bundling.ts
 */
export function esbuildOptionsOf(
  bundling: nodejs.BundlingOptions,
  entry: string,
  outfile: string,
): BuildOptions {
  const unknown = Object.keys(bundling).filter((k) => !TRANSLATED.has(k as keyof nodejs.BundlingOptions));
  if (unknown.length > 0) {
    throw new Error(`esbuildOptionsOf: no esbuild translation for bundling option(s) ${unknown.join(', ')}`);
  }
  const esbuildArgs = bundling.esbuildArgs ?? {};
  const unknownArgs = Object.keys(esbuildArgs).filter((k) => k !== '--alias');
  if (unknownArgs.length > 0) {
    throw new Error(`esbuildOptionsOf: no esbuild translation for esbuildArgs ${unknownArgs.join(', ')}`);
  }
  const alias = Object.fromEntries(
    [esbuildArgs['--alias'] ?? []].flat().map((pair) => {
      const [from, to] = String(pair).split('=');
      return [from as string, to as string];
    }),
  );
  return {
    absWorkingDir: REPO_ROOT,
    entryPoints: [entry],
    bundle: true,
    outfile,
    platform: 'node',
    ...(bundling.target === undefined ? {} : { target: bundling.target }),
    ...(bundling.format === undefined ? {} : { format: bundling.format }),
    minify: bundling.minify === true,
    keepNames: bundling.keepNames === true,
    sourcemap: bundling.sourceMap === true,
    sourcesContent: bundling.sourcesContent !== false,
    external: [...(bundling.externalModules ?? ['@aws-sdk/*'])],
    ...(bundling.banner === undefined ? {} : { banner: { js: bundling.banner } }),
    ...(bundling.mainFields === undefined ? {} : { mainFields: [...bundling.mainFields] }),
    metafile: bundling.metafile === true,
    alias,
    logLevel: 'warning',
  };
}

/** Where a function's handler lives. */
export function handlerEntry(functionsDir: string, name: string): string {
  return join(functionsDir, name, 'handler.ts');
}
