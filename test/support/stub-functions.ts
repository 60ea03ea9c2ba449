/**
 * A functions directory with a stub `handler.ts` for every catalogue function, for infra tests
 * that build a PipelineStack with bundling skipped (the real bundles are checked in
 * test/infra/pipeline-stack.test.ts). Under the repository's `.local/`, so esbuild and the
 * stack resolve it like the real one.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FUNCTION_NAMES } from '@dlq-redrive/cdk/function-catalog';
import { App } from 'aws-cdk-lib';
import { REPO_ROOT } from '../../infra/bundling.js';

/** Creates the directory; `remove()` deletes it. */
export function stubFunctionsDir(prefix: string): { dir: string; remove: () => void } {
  mkdirSync(join(REPO_ROOT, '.local'), { recursive: true });
  const dir = mkdtempSync(join(REPO_ROOT, '.local', prefix));
  for (const name of FUNCTION_NAMES) {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, 'handler.ts'), 'export const handler = async () => ({});\n');
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * An app for tests that inspect templates: it skips asset bundling (`aws:cdk:bundling-stacks: []`,
 * CDK's own switch) and CDK's built-in CloudFormation validation (`builtinCloudFormationValidation`),
 * which runs a WebAssembly rule engine on every synth: about three quarters of an infra file's
 * CPU (measured: 3 synths of the stub pipeline, 13.1 s of CPU with it, 3.1 s without). The
 * validation only warns by default (CDK downgrades its errors unless
 * `@aws-cdk/core:validateAgainstDefaultRules` is set), and no test here asserts on its report;
 * test/infra/pipeline-stack.test.ts synthesizes the real app with both on, as `cdk synth` does.
 *
 * @see https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.AppProps.html
 */
export function templateOnlyApp(): App {
  return new App({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
}
