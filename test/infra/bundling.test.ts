/**
 * The Lambda bundling options (infra/bundling.ts): bundled SDK clients take the environment's
 * credentials with the STS/SSO links of the chain off the cold path, each function's cold path
 * (the bytes of its static import graph) stays within 5% of the baseline bench/bundles recorded,
 * and the esbuild translation refuses options it does not cover.
 * (pipeline-stack.test.ts checks the translation against the stack's own assets, byte for byte.)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FUNCTION_NAMES } from '@dlq-redrive/cdk/function-catalog';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleBytes } from '../../bench/bundles/static-graph.js';
import { esbuildOptionsOf, handlerEntry, PIPELINE_BUNDLING, REPO_ROOT } from '../../infra/bundling.js';
import { scaled } from '../support/timeouts.js';

let dir: string;
let bundle: string;
let metafile: Metafile;

beforeAll(async () => {
  mkdirSync(join(REPO_ROOT, '.local'), { recursive: true });
  dir = mkdtempSync(join(REPO_ROOT, '.local', 'bundling-'));
  const entry = join(dir, 'entry.ts');
  writeFileSync(
    entry,
    [
      "import { SQSClient } from '@aws-sdk/client-sqs';",
      'try {',
      "  const credentials = await new SQSClient({ region: 'us-east-1' }).config.credentials();",
      '  console.log(JSON.stringify({ accessKeyId: credentials.accessKeyId }));',
      '} catch (error) {',
      '  console.log(JSON.stringify({ error: (error as Error).name, message: (error as Error).message }));',
      '}',
    ].join('\n'),
  );
  bundle = join(dir, 'out', 'index.mjs');
  const result = await build({ ...esbuildOptionsOf(PIPELINE_BUNDLING, entry, bundle), metafile: true });
  metafile = result.metafile;
}, scaled(60_000));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the bundle with exactly `env` (plus PATH), as a Lambda environment would. */
function run(env: Record<string, string>): Record<string, string> {
  const out = execFileSync(process.execPath, [bundle], {
    env: { PATH: process.env.PATH ?? '', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env },
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Record<string, string>;
}

describe('credential provider of the Lambda bundles', () => {
  it('gives a bundled SDK client the execution role credentials Lambda puts in the environment', () => {
    const out = run({
      AWS_ACCESS_KEY_ID: 'ASIAEXAMPLEFROMENV',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_SESSION_TOKEN: 'token',
    });

    expect(out).toEqual({ accessKeyId: 'ASIAEXAMPLEFROMENV' });
  });

  it('keeps the STS, SSO and ini links of the credential chain off the cold path (await import only)', () => {
    const { staticInputs } = bundleBytes(metafile, bundle);
    const chain = /@aws-sdk\/(nested-clients|credential-provider-(ini|sso|login|process|web-identity))\//;

    expect([...staticInputs].filter((path) => chain.test(path))).toEqual([]);
    expect(Object.keys(metafile.inputs).some((path) => chain.test(path))).toBe(true);
    expect([...staticInputs].some((path) => path.includes('@aws-sdk/credential-provider-env/'))).toBe(true);
  });
});

describe('esbuildOptionsOf', () => {
  it('refuses a bundling option it has no translation for, naming it', () => {
    expect(() =>
      esbuildOptionsOf({ ...PIPELINE_BUNDLING, define: { X: '1' } }, '/entry.ts', '/out/index.mjs'),
    ).toThrow(/bundling option\(s\) define/);
    expect(() =>
      esbuildOptionsOf({ ...PIPELINE_BUNDLING, esbuildArgs: { '--log-limit': '0' } }, '/e.ts', '/o.mjs'),
    ).toThrow(/esbuildArgs --log-limit/);
  });

  it('passes the bundle shape the stack asks for, with no alias', () => {
    const options = esbuildOptionsOf(PIPELINE_BUNDLING, '/entry.ts', '/out/index.mjs');

    expect(options.alias).toEqual({});
    expect(options).toMatchObject({
      format: 'esm',
      target: 'node22',
      minify: true,
      keepNames: true,
      external: [],
    });
  });
});

/**
 * The cold path of each function: bytes of its static import graph (what Lambda's init evaluates),
 * against bench/bundles/static-baseline.json (`npm run bench:bundles -- --record`). The build is
 * deterministic, so any growth is real. 5% is below the smallest SDK client's static share (SQS,
 * 28 KB = 7.5% of the smallest graph, request-approval's 372 KB): a client or a library of that
 * size landing on the cold path fails here, ordinary code growth does not. docs/bundles.md.
 */
describe('cold path of every function bundle', () => {
  const MARGIN = 0.05;
  const baseline = JSON.parse(
    readFileSync(join(REPO_ROOT, 'bench', 'bundles', 'static-baseline.json'), 'utf8'),
  ) as Record<string, number>;

  it(
    "keeps each bundle's statically imported bytes within 5% of its recorded baseline",
    async () => {
      const over: Array<{ name: string; bytes: number; limit: number }> = [];
      for (const name of FUNCTION_NAMES) {
        const outfile = join(dir, 'fn', name, 'index.mjs');
        const entry = handlerEntry(join(REPO_ROOT, 'functions'), name);
        const built = await build({ ...esbuildOptionsOf(PIPELINE_BUNDLING, entry, outfile), metafile: true });
        const bytes = bundleBytes(built.metafile, outfile).static;
        const limit = Math.round((baseline[name] ?? 0) * (1 + MARGIN));
        if (bytes > limit) over.push({ name, bytes, limit });
      }

      expect(Object.keys(baseline).sort()).toEqual([...FUNCTION_NAMES].sort());
      expect(over).toEqual([]);
    },
    scaled(180_000),
  );
});
