/**
 * The demo app (`cdk.json`'s app): the example stack only when asked, so `cdk deploy --all`
 * deploys the pipeline alone unless `-c example=true` is given (docs/deploy.md).
 */
import { App } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemoApp } from '../../infra/demo-app.js';
import { stubFunctionsDir } from '../support/stub-functions.js';

let stubs: ReturnType<typeof stubFunctionsDir>;
beforeAll(() => {
  stubs = stubFunctionsDir('demo-app-fns-');
});
afterAll(() => stubs.remove());

/** The stack ids `cdk deploy --all` would deploy with this context. */
function stacksWith(context: Record<string, unknown>): string[] {
  const app = new App({
    context: { 'aws:cdk:bundling-stacks': [], ...context },
    builtinCloudFormationValidation: false,
  });
  buildDemoApp(app, { functionsDir: stubs.dir });
  return app.node.children.map((c) => c.node.id).sort();
}

describe('the demo app', () => {
  it('builds only the pipeline stack when no example is asked for', () => {
    expect(stacksWith({})).toEqual(['DlqRedrivePipeline']);
    expect(stacksWith({ example: 'false' })).toEqual(['DlqRedrivePipeline']);
  });

  it('adds the example orders stack with -c example=true', () => {
    expect(stacksWith({ example: 'true' })).toEqual(['DlqRedriveExample', 'DlqRedrivePipeline']);
  });

  it('refuses an example value other than true or false, naming the context key and the value', () => {
    expect(() => stacksWith({ example: 'yes' })).toThrow(
      'context example: must be true or false (given: "yes")',
    );
  });
});
