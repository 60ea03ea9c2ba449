/**
 * A pipeline deployed by another app of the account, imported with RedrivePipeline.fromAttributes:
 * MonitoredDlq routes, registers and grants against it with nothing of the pipeline's stack in the
 * app; bad attributes and props are ValidationErrors naming each problem.
 */
import { App, Stack, aws_sqs as sqs } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import {
  MonitoredDlq,
  RedrivePipeline,
  type RedrivePipelineAttributes,
  ValidationError,
} from '../src/index.js';

const ENV = { account: '111122223333', region: 'us-east-1' };
const ARN = 'arn:aws:sqs:us-east-1:111122223333';
const ATTRS: RedrivePipelineAttributes = {
  stackName: 'DlqRedrivePipeline',
  tableArn: 'arn:aws:dynamodb:us-east-1:111122223333:table/dlq-redrive',
  roleArns: {
    triage: 'arn:aws:iam::111122223333:role/TriageRole',
    'move-task': 'arn:aws:iam::111122223333:role/MoveTaskRole',
  },
  triageFunctionArn: 'arn:aws:lambda:us-east-1:111122223333:function:triage',
};

function consumer(attrs: RedrivePipelineAttributes = ATTRS) {
  // CDK's built-in CloudFormation validation only warns and costs most of a synth's CPU: off.
  const app = new App({ builtinCloudFormationValidation: false });
  const stack = new Stack(app, 'Consumer', { env: ENV });
  const pipeline = RedrivePipeline.fromAttributes(stack, 'Pipeline', attrs);
  const queue = sqs.Queue.fromQueueArn(stack, 'Orders', `${ARN}:orders`);
  const dlq = sqs.Queue.fromQueueArn(stack, 'OrdersDlq', `${ARN}:orders-dlq`);
  return { stack, pipeline, queue, dlq };
}

describe('RedrivePipeline.fromAttributes', () => {
  it('routes both alarms to the imported triage function by a rule in the consumer stack', () => {
    const { stack, pipeline, queue, dlq } = consumer();
    const monitored = new MonitoredDlq(stack, 'OrdersMonitored', { pipeline, queue, dlq });
    const template = Template.fromStack(stack);

    const arns = stack.resolve(monitored.routedAlarmArns);
    const tail = ':cloudwatch:us-east-1:111122223333:alarm:dlq-redrive-orders-dlq-';
    expect(arns).toEqual(
      ['visible', 'oldest-age'].map((suffix) => ({
        'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `${tail}${suffix}`]],
      })),
    );
    template.resourceCountIs('AWS::Events::Rule', 1);
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['aws.cloudwatch'], resources: arns },
      Targets: [Match.objectLike({ Arn: ATTRS.triageFunctionArn })],
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      FunctionName: ATTRS.triageFunctionArn,
      Principal: 'events.amazonaws.com',
    });
  });

  it('writes the registration into the imported table and grants the imported roles on the DLQ', () => {
    const { stack, pipeline, queue, dlq } = consumer();
    new MonitoredDlq(stack, 'OrdersMonitored', { pipeline, queue, dlq });
    const template = Template.fromStack(stack);

    const registration = Object.values(template.findResources('Custom::DlqRedriveRegistration'))[0];
    expect(JSON.stringify(registration?.Properties?.Create)).toContain('"TableName\\":\\"dlq-redrive\\"');
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: ['MoveTaskRole'],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: Match.arrayWith(['sqs:StartMessageMoveTask']),
            Resource: `${ARN}:orders-dlq`,
          }),
        ]),
      },
    });
    // Only the roles given get grants: their 2 policies, and the registration writer's own.
    template.resourcePropertiesCountIs('AWS::IAM::Policy', { Roles: Match.anyValue() }, 3);
  });

  it('uses the alarm topic as the alarms action when only SNS reaches triage', () => {
    const { triageFunctionArn: _t, ...rest } = ATTRS;
    const topicArn = 'arn:aws:sns:us-east-1:111122223333:alarms';
    const { stack, pipeline, queue, dlq } = consumer({ ...rest, alarmTopicArn: topicArn });
    const monitored = new MonitoredDlq(stack, 'OrdersMonitored', { pipeline, queue, dlq });

    expect(monitored.routedAlarmArns).toEqual([]);
    Template.fromStack(stack).resourceCountIs('AWS::Events::Rule', 0);
    Template.fromStack(stack).hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmActions: [topicArn] });
  });

  it('refuses bad attributes in one ValidationError naming each one and the value given', () => {
    let caught: unknown;
    try {
      consumer({
        stackName: 'P',
        tableArn: 'arn:aws:s3:::bucket',
        roleArns: { triage: 'TriageRole' },
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    const error = caught as ValidationError;
    expect(error.name).toBe('ValidationError');
    expect(error.constructPath).toBe('Consumer/Pipeline');
    expect(error.details).toEqual([
      expect.stringMatching(/^tableArn: must be a DynamoDB table ARN.*\(given: "arn:aws:s3:::bucket"\)$/),
      'roleArns.triage: must be an IAM role ARN (given: "TriageRole")',
      'triageFunctionArn, alarmTopicArn: at least one is needed to reach triage (given: neither)',
    ]);
  });

  it('refuses a MonitoredDlq in another Region than the imported pipeline', () => {
    const { stack, pipeline, queue, dlq } = consumer({
      ...ATTRS,
      tableArn: 'arn:aws:dynamodb:eu-west-1:111122223333:table/dlq-redrive',
    });
    expect(() => new MonitoredDlq(stack, 'OrdersMonitored', { pipeline, queue, dlq })).toThrow(
      /region: MonitoredDlq must be in the pipeline's region \(pipeline: eu-west-1, this stack: us-east-1\)/,
    );
  });
});
