import { MonitoredDlq } from '@dlq-redrive/cdk';
import { Stack, aws_sqs as sqs } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PipelineStack } from '../../infra/pipeline-stack.js';
import { stubFunctionsDir, templateOnlyApp } from '../support/stub-functions.js';

const ENV = { account: '111122223333', region: 'us-east-1' };
let pipeline: Template;
let consumer: Template;

let stubs: ReturnType<typeof stubFunctionsDir>;

beforeAll(() => {
  stubs = stubFunctionsDir('monitoring-fns-');
  const functionsDir = stubs.dir;
  const app = templateOnlyApp();
  const stack = new PipelineStack(app, 'Pipeline', { env: ENV, functionsDir });
  const consumerStack = new Stack(app, 'Consumer', { env: ENV });
  new MonitoredDlq(consumerStack, 'Orders', {
    pipeline: stack,
    queue: sqs.Queue.fromQueueArn(consumerStack, 'Q', 'arn:aws:sqs:us-east-1:111122223333:orders'),
    dlq: sqs.Queue.fromQueueArn(consumerStack, 'D', 'arn:aws:sqs:us-east-1:111122223333:orders-dlq'),
  });
  pipeline = Template.fromStack(stack);
  consumer = Template.fromStack(consumerStack);
});
afterAll(() => stubs.remove());

/** A dashboard's body as JSON text (CloudFormation may split it around tokens). */
function body(template: Template): string {
  const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
  return JSON.stringify(dashboard?.Properties?.DashboardBody);
}

describe('pipeline monitoring (dashboard, alarms, metrics namespace, tracing)', () => {
  it('has a dlq-redrive dashboard of the DlqRedrive metrics: outcomes, counts, ramp rate, exposure, duration', () => {
    pipeline.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'dlq-redrive' });
    const text = body(pipeline);
    for (const metric of [
      'Redriven',
      'Parked',
      'Discarded',
      'Missing',
      'RunsHalted',
      'RampRate',
      'Exposed',
      'RunDuration',
    ])
      expect(text).toContain(`\\"${metric}\\"`);
    expect(text).toContain('\\"DlqRedrive\\"');
    expect(text).toContain('\\"service\\",\\"dlq-redrive\\"');
  });

  it('alarms when a run leaves a message missing (Missing > 0) and when a run halts or fails', () => {
    pipeline.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'DlqRedrive',
      MetricName: 'Missing',
      Dimensions: [{ Name: 'service', Value: 'dlq-redrive' }],
      Statistic: 'Sum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    pipeline.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: 'FILL(halted, 0) + FILL(failed, 0)' }),
        Match.objectLike({
          Id: 'halted',
          MetricStat: Match.objectLike({
            Metric: Match.objectLike({ MetricName: 'RunsHalted', Namespace: 'DlqRedrive' }),
          }),
        }),
        Match.objectLike({
          Id: 'failed',
          MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: 'RunsFailed' }) }),
        }),
      ]),
    });
  });

  it('gives each registered DLQ a dashboard in its own stack, with its depth and the pipeline metrics for DlqName=<queue>', () => {
    consumer.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    const text = body(consumer);
    expect(text).toContain('\\"DlqName\\",\\"orders-dlq\\"');
    expect(text).toContain('ApproximateNumberOfMessagesVisible');
    // The per-DLQ graphs live in the DLQ's stack: the pipeline's dashboard stays pipeline-wide.
    pipeline.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    expect(body(pipeline)).not.toContain('DlqName');
  });

  it('turns X-Ray off on every function and the state machine (no SDK call is traced, so no empty traces)', () => {
    const fns = Object.values(pipeline.findResources('AWS::Lambda::Function'));
    expect(fns.length).toBeGreaterThan(0);
    for (const fn of fns) expect(fn.Properties?.TracingConfig?.Mode ?? 'PassThrough').not.toBe('Active');
    const [machine] = Object.values(pipeline.findResources('AWS::StepFunctions::StateMachine'));
    expect(machine?.Properties?.TracingConfiguration?.Enabled ?? false).toBe(false);
  });

  it('sets the metrics namespace the functions publish in on every function', () => {
    for (const fn of Object.values(pipeline.findResources('AWS::Lambda::Function')))
      expect(fn.Properties?.Environment?.Variables?.POWERTOOLS_METRICS_NAMESPACE).toBe('DlqRedrive');
  });
});
