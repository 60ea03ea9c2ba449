/**
 * The demo app: the pipeline stack plus an example stack with a source queue, its DLQ and a
 * {@link MonitoredDlq} registering them. Every context value has a default, so `npx cdk synth`
 * works with none.
 *
 * Context (all optional): `slackChannel`, `approvers` (comma-separated Slack user ids), `owner`,
 * `alarmDelivery` (`eventbridge` | `sns` | `both`), `slackSecretArn` (an existing secret),
 * `slackDefaultChannel` (approvals of DLQs whose registration names no channel).
 *
 * @see https://docs.aws.amazon.com/cdk/v2/guide/context.html
 */

import { MonitoredDlq } from '@dlq-redrive/cdk';
import { type App, Duration, Stack, type StackProps, aws_sqs as sqs } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { type AlarmDelivery, PipelineStack, type PipelineStackProps } from './pipeline-stack.js';

const CROSS_STACK_STRENGTH = '@aws-cdk/core:defaultCrossStackReferences';

/** Properties of {@link ExampleQueuesStack}. */
export interface ExampleQueuesStackProps extends StackProps {
  readonly pipeline: PipelineStack;
  /** @default 'C0EXAMPLE00' */
  readonly slackChannel?: string;
  /** @default [] */
  readonly approvers?: readonly string[];
  /** @default 'team-orders' */
  readonly owner?: string;
}

/** An example consumer stack: `orders` with its DLQ, registered with the pipeline. */
export class ExampleQueuesStack extends Stack {
  public readonly queue: sqs.Queue;
  public readonly dlq: sqs.Queue;
  public readonly monitored: MonitoredDlq;

  public constructor(scope: Construct, id: string, props: ExampleQueuesStackProps) {
    super(scope, id, props);
    this.dlq = new sqs.Queue(this, 'OrdersDlq', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new sqs.Queue(this, 'Orders', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(30),
      deadLetterQueue: { queue: this.dlq, maxReceiveCount: 5 },
    });
    this.monitored = new MonitoredDlq(this, 'OrdersMonitored', {
      pipeline: props.pipeline,
      queue: this.queue,
      dlq: this.dlq,
      owner: props.owner ?? 'team-orders',
      slackChannel: props.slackChannel ?? 'C0EXAMPLE00',
      approvers: props.approvers ?? [],
      producerKey: { jsonPath: '$.orderId' },
    });
  }
}

/**
 * Builds the demo app's stacks from context (defaults for every value).
 * @param options.functionsDir - @default functions/ (see {@link PipelineStackProps.functionsDir})
 */
export function buildDemoApp(
  app: App,
  options: { functionsDir?: string } = {},
): { pipeline: PipelineStack; example: ExampleQueuesStack } {
  // Lock in CDK's current behaviour for the example stack's references to the pipeline
  // (CloudFormation exports, which stop the pipeline from removing a value still in use).
  // @see https://github.com/aws/aws-cdk/blob/main/packages/aws-cdk-lib/README.md#reference-strength
  if (app.node.tryGetContext(CROSS_STACK_STRENGTH) === undefined)
    app.node.setContext(CROSS_STACK_STRENGTH, 'strong');
  const ctx = (key: string): string | undefined => {
    const value: unknown = app.node.tryGetContext(key);
    return typeof value === 'string' && value.length > 0 ? value : undefined;
  };
  const account = process.env.CDK_DEFAULT_ACCOUNT;
  const region = process.env.CDK_DEFAULT_REGION;
  const stackEnv = account !== undefined && region !== undefined ? { env: { account, region } } : {};
  const delivery = ctx('alarmDelivery');
  if (delivery !== undefined && !['eventbridge', 'sns', 'both'].includes(delivery)) {
    throw new Error(
      `context alarmDelivery: must be eventbridge, sns or both (given: ${JSON.stringify(delivery)})`,
    );
  }
  const secretArn = ctx('slackSecretArn');
  const pipeline = new PipelineStack(app, 'DlqRedrivePipeline', {
    ...stackEnv,
    description: 'dlq-redrive: alarm-triggered triage and safe, ramped redrive of SQS dead-letter queues',
    ...(delivery === undefined ? {} : { alarmDelivery: delivery as AlarmDelivery }),
    ...(secretArn === undefined ? {} : { slackSecretArn: secretArn }),
    ...(ctx('slackDefaultChannel') === undefined
      ? {}
      : { slackDefaultChannel: ctx('slackDefaultChannel') as string }),
    ...(options.functionsDir === undefined ? {} : { functionsDir: options.functionsDir }),
  });
  const approvers = ctx('approvers')
    ?.split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const example = new ExampleQueuesStack(app, 'DlqRedriveExample', {
    ...stackEnv,
    description: 'dlq-redrive example: an orders queue and its DLQ registered with the pipeline',
    pipeline,
    ...(ctx('slackChannel') === undefined ? {} : { slackChannel: ctx('slackChannel') as string }),
    ...(approvers === undefined ? {} : { approvers }),
    ...(ctx('owner') === undefined ? {} : { owner: ctx('owner') as string }),
  });
  return { pipeline, example };
}
