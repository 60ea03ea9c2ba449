/**
 * The execution-ended rule (PipelineStackProps.executionEndedRule): its event pattern matches the
 * documented sample event of the pipeline's own state machine and no other, it targets
 * execution-ended with a retry policy and the alarm-delivery DLQ, and cdk-nag stays clean.
 * Built from stub handlers with bundling skipped (the real bundles are checked in pipeline-stack.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { App, CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PipelineStack, REPO_ROOT } from '../../infra/pipeline-stack.js';
import { stubFunctionsDir, templateOnlyApp } from '../support/stub-functions.js';

const ENV = { account: '111122223333', region: 'us-east-1' };
type Pattern = { [field: string]: unknown[] | Pattern };

/**
 * EventBridge matching for patterns of exact-value arrays and nested objects (all this rule uses).
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html
 */
function matches(pattern: Pattern, event: Record<string, unknown>): boolean {
  return Object.entries(pattern).every(([field, allowed]) => {
    const value = event[field];
    if (!Array.isArray(allowed)) {
      return (
        value !== null && typeof value === 'object' && matches(allowed, value as Record<string, unknown>)
      );
    }
    return [value].flat().some((v) => allowed.includes(v));
  });
}

const sample = JSON.parse(
  readFileSync(join(REPO_ROOT, 'events/stepfunctions/execution-status-change-aborted.json'), 'utf8'),
) as Record<string, unknown> & { detail: Record<string, unknown> };

let functionsDir: string;
let removeFunctionsDir: () => void;

beforeAll(() => {
  ({ dir: functionsDir, remove: removeFunctionsDir } = stubFunctionsDir('infra-ended-'));
});

afterAll(() => removeFunctionsDir());

function pipelineApp(executionEndedRule?: boolean): { app: App; pipeline: PipelineStack } {
  const app = templateOnlyApp();
  const pipeline = new PipelineStack(app, 'Pipeline', {
    env: ENV,
    functionsDir,
    ...(executionEndedRule === undefined ? {} : { executionEndedRule }),
  });
  return { app, pipeline };
}

describe('execution-ended rule', () => {
  it('matches the sample ABORTED event of the pipeline state machine, and not another machine or a SUCCEEDED run', () => {
    const { app, pipeline } = pipelineApp(true);
    app.synth();
    const rule = pipeline.executionEndedRule;
    const ruleId = pipeline.getLogicalId(rule?.node.defaultChild as CfnElement);
    const smId = pipeline.getLogicalId(pipeline.stateMachine?.node.defaultChild as CfnElement);
    const raw = Template.fromStack(pipeline).toJSON().Resources[ruleId].Properties.EventPattern as Pattern & {
      detail: { stateMachineArn: unknown[] };
    };

    // The pattern names this stack's state machine (a Ref); the sample's ARN stands in for it.
    expect(raw.detail.stateMachineArn).toEqual([{ Ref: smId }]);
    const pattern = { ...raw, detail: { ...raw.detail, stateMachineArn: [sample.detail.stateMachineArn] } };

    expect(matches(pattern, sample)).toBe(true);
    for (const status of ['TIMED_OUT', 'FAILED']) {
      expect(matches(pattern, { ...sample, detail: { ...sample.detail, status } }), status).toBe(true);
    }
    expect(matches(pattern, { ...sample, detail: { ...sample.detail, status: 'SUCCEEDED' } })).toBe(false);
    expect(
      matches(pattern, {
        ...sample,
        detail: {
          ...sample.detail,
          stateMachineArn: 'arn:aws:states:us-east-1:111122223333:stateMachine:Other',
        },
      }),
    ).toBe(false);
  });

  it('targets execution-ended with a retry policy and the alarm-delivery DLQ, and leaves no cdk-nag finding', () => {
    const { app, pipeline } = pipelineApp(true);
    app.synth();
    const fnId = pipeline.getLogicalId(
      pipeline.functions['execution-ended']?.node.defaultChild as CfnElement,
    );
    const dlqId = pipeline.getLogicalId(pipeline.alarmDeliveryDlq.node.defaultChild as CfnElement);

    Template.fromStack(pipeline).hasResourceProperties('AWS::Events::Rule', {
      EventPattern: Match.objectLike({ source: ['aws.states'] }),
      State: 'ENABLED',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [fnId, 'Arn'] },
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [dlqId, 'Arn'] } },
          RetryPolicy: { MaximumRetryAttempts: 8, MaximumEventAgeInSeconds: 7200 },
        }),
      ],
    });
    const report = new AwsSolutionsChecks(app).validateScope(app);
    expect(
      report.violations.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath)}`),
    ).toEqual([]);
  });

  it('is created by default', () => {
    const { app, pipeline } = pipelineApp();
    app.synth();
    expect(pipeline.executionEndedRule).toBeDefined();
  });

  it('is left out with executionEndedRule: false (the function is still built)', () => {
    const { app, pipeline } = pipelineApp(false);
    app.synth();

    expect(pipeline.executionEndedRule).toBeUndefined();
    expect(pipeline.functions['execution-ended']).toBeDefined();
    expect(JSON.stringify(Template.fromStack(pipeline).findResources('AWS::Events::Rule'))).not.toContain(
      'aws.states',
    );
  });
});
