/**
 * The Lambda bundling options (infra/bundling.ts): the credential-provider alias gives bundled SDK
 * clients the environment's credentials and nothing else, the STS/SSO clients of the full chain
 * stay out of the bundle, and the esbuild translation refuses options it does not cover.
 * (pipeline-stack.test.ts checks the translation against the stack's own assets, byte for byte.)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { esbuildOptionsOf, PIPELINE_BUNDLING, REPO_ROOT } from '../../infra/bundling.js';
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

  it('fails with CredentialsProviderError when the environment has none, even with a profile configured', () => {
    const home = join(dir, 'home');
    mkdirSync(join(home, '.aws'), { recursive: true });
    writeFileSync(
      join(home, '.aws', 'credentials'),
      '[default]\naws_access_key_id = AKIAFROMPROFILE\naws_secret_access_key = x\n',
    );

    const out = run({ HOME: home });

    expect(out.error).toBe('CredentialsProviderError');
    expect(out.message).toMatch(/environment variable/i);
  });

  it('leaves the STS, SSO and Signin clients of the full credential chain out of the bundle', () => {
    const inputs = Object.keys(metafile.inputs);

    expect(
      inputs.filter((path) => /@aws-sdk\/(nested-clients|credential-provider-(ini|sso|node))\//.test(path)),
    ).toEqual([]);
    expect(inputs.some((path) => path.includes('@aws-sdk/credential-provider-env/'))).toBe(true);
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

  it('passes the credential-provider alias and the bundle shape the stack asks for', () => {
    const options = esbuildOptionsOf(PIPELINE_BUNDLING, '/entry.ts', '/out/index.mjs');

    expect(options.alias).toEqual({ '@aws-sdk/credential-provider-node': './infra/lambda-credentials.ts' });
    expect(options).toMatchObject({
      format: 'esm',
      target: 'node22',
      minify: true,
      keepNames: true,
      external: [],
    });
  });
});
