/**
 * MonitoredDlq: prop validation, alarms, routing, registration and queue grants.
 *
 * These stacks skip asset bundling (`aws:cdk:bundling-stacks: []`, CDK's own switch) and build
 * the pipeline from stub function folders, so the file runs in seconds and does not depend on
 * which real handlers exist yet; test/infra/pipeline-stack.test.ts bundles the real ones.
 */

import {
  DlqCompositeAlarm,
  MonitoredDlq,
  type MonitoredDlqProps,
  registrationItem,
  ValidationError,
} from '@dlq-redrive/cdk';
import { FUNCTION_NAMES, pascalOf } from '@dlq-redrive/cdk/function-catalog';
import {
  type App,
  type aws_cloudwatch as cloudwatch,
  Duration,
  aws_kms as kms,
  Stack,
  aws_s3 as s3,
  aws_sqs as sqs,
} from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueRegistration } from '#inventory/model.js';
import { type AlarmDelivery, PipelineStack } from '../../infra/pipeline-stack.js';
import { stubFunctionsDir, templateOnlyApp } from '../support/stub-functions.js';

const ENV = { account: '111122223333', region: 'us-east-1' };
const DLQ_ARN = 'arn:aws:sqs:us-east-1:111122223333:orders-dlq';
const QUEUE_ARN = 'arn:aws:sqs:us-east-1:111122223333:orders';

let functionsDir: string;
let removeFunctionsDir: () => void;

beforeAll(() => {
  ({ dir: functionsDir, remove: removeFunctionsDir } = stubFunctionsDir('infra-fns-'));
});

afterAll(() => removeFunctionsDir());

/** An app whose stacks skip bundling, with a pipeline built from stub handlers. */
function pipelineApp(alarmDelivery: AlarmDelivery = 'eventbridge'): { app: App; pipeline: PipelineStack } {
  const app = templateOnlyApp();
  const pipeline = new PipelineStack(app, 'Pipeline', { env: ENV, functionsDir, alarmDelivery });
  return { app, pipeline };
}

function importedQueues(stack: Stack): { queue: sqs.IQueue; dlq: sqs.IQueue } {
  return {
    queue: sqs.Queue.fromQueueArn(stack, 'Orders', QUEUE_ARN),
    dlq: sqs.Queue.fromQueueArn(stack, 'OrdersDlq', DLQ_ARN),
  };
}

/** The alarm-routing rules (source aws.cloudwatch), leaving out the execution-ended rule. */
// biome-ignore lint/suspicious/noExplicitAny: CloudFormation resources as Template returns them.
function alarmRules(template: Template): Record<string, any> {
  const all = template.findResources('AWS::Events::Rule');
  return Object.fromEntries(
    Object.entries(all).filter(([, r]) =>
      JSON.stringify(r.Properties?.EventPattern?.source ?? []).includes('aws.cloudwatch'),
    ),
  );
}

describe('MonitoredDlq prop validation', () => {
  it('rejects several bad props in one error that names each prop, its allowed range and the value given', () => {
    const { app, pipeline } = pipelineApp();
    const stack = new Stack(app, 'Consumer', { env: ENV });
    const { queue, dlq } = importedQueues(stack);

    let caught: unknown;
    try {
      new MonitoredDlq(stack, 'Bad', {
        pipeline,
        queue,
        dlq,
        sampleSize: 0,
        rampRates: [600, 5],
        dwellSeconds: 7200,
        producerKey: { jsonPath: 'orderId' },
        oldestMessageAgeRatio: 2,
        alarmNamePrefix: 'has spaces',
      });
    } catch (error) {
      caught = error;
    }

    expect(caught).toBeInstanceOf(ValidationError);
    const error = caught as ValidationError;
    expect(error.name).toBe('ValidationError');
    expect(error.constructPath).toBe('Consumer/Bad');
    const details = error.details.join('\n');
    expect(details).toMatch(/sampleSize: .*>=1.*\(given: 0\)/);
    expect(details).toMatch(/rampRates\.0: .*<=500.*\(given: 600\)/);
    expect(details).toMatch(/rampRates: must be strictly ascending \(given: \[600,5\]\)/);
    expect(details).toMatch(/dwellSeconds: .*<=3600.*\(given: 7200\)/);
    expect(details).toMatch(/producerKey.*\(given: /);
    expect(details).toMatch(/oldestMessageAgeRatio: must be greater than 0 and at most 1 \(given: 2\)/);
    expect(details).toMatch(/alarmNamePrefix: .*\(given: "has spaces"\)/);
    expect(error.details.length).toBeGreaterThanOrEqual(7);
  });

  it('rejects a FIFO DLQ under a standard source queue and a retention period over 14 days', () => {
    const { app, pipeline } = pipelineApp();
    const stack = new Stack(app, 'Consumer', { env: ENV });
    const queue = sqs.Queue.fromQueueArn(stack, 'Orders', QUEUE_ARN);
    const dlq = sqs.Queue.fromQueueAttributes(stack, 'Dlq', { queueArn: `${DLQ_ARN}.fifo`, fifo: true });

    let message = '';
    try {
      new MonitoredDlq(stack, 'Bad', { pipeline, queue, dlq, dlqRetentionPeriod: Duration.days(15) });
    } catch (error) {
      message = (error as Error).message;
    }

    expect(message).toMatch(/dlq: must be the same queue type as queue \(queue is standard, dlq is FIFO\)/);
    expect(message).toMatch(
      /dlqRetentionPeriod: must be 60\.\.1209600 seconds \(1 minute\.\.14 days\) \(given: 1296000 seconds\)/,
    );
  });

  it('C08 registers a FIFO DLQ of a FIFO source queue under its .fifo ARN', () => {
    const { app, pipeline } = pipelineApp();
    const stack = new Stack(app, 'Consumer', { env: ENV });
    const queue = sqs.Queue.fromQueueAttributes(stack, 'Orders', {
      queueArn: `${QUEUE_ARN}.fifo`,
      fifo: true,
    });
    const dlq = sqs.Queue.fromQueueAttributes(stack, 'Dlq', { queueArn: `${DLQ_ARN}.fifo`, fifo: true });

    const monitored = new MonitoredDlq(stack, 'OrdersFifo', { pipeline, queue, dlq });

    expect(monitored.registration.pk).toBe(`DLQ#${DLQ_ARN}.fifo`);
    expect(monitored.registration.dlqArn).toBe(`${DLQ_ARN}.fifo`);
    expect(monitored.depthAlarm.node.defaultChild).toMatchObject({
      alarmName: 'dlq-redrive-orders-dlq-fifo-visible',
    });
  });

  it('rejects a MonitoredDlq in another Region than the pipeline', () => {
    const { app, pipeline } = pipelineApp();
    const stack = new Stack(app, 'Elsewhere', { env: { ...ENV, region: 'eu-west-1' } });
    const { queue, dlq } = importedQueues(stack);

    expect(() => new MonitoredDlq(stack, 'Far', { pipeline, queue, dlq })).toThrow(
      /region: MonitoredDlq must be in the pipeline's region \(pipeline: us-east-1, this stack: eu-west-1\)/,
    );
  });

  it('applies the registration defaults and keeps every field the schema knows', () => {
    const { app, pipeline } = pipelineApp();
    const stack = new Stack(app, 'Consumer', { env: ENV });
    const { queue, dlq } = importedQueues(stack);
    const props: MonitoredDlqProps = {
      pipeline,
      queue,
      dlq,
      owner: 'team-orders',
      approvers: ['U0123456789'],
    };

    const item = registrationItem(props);

    const { pk, sk, gsi1pk, gsi1sk, shapeVersion, ...registration } = item;
    expect(pk).toBe(`DLQ#${DLQ_ARN}`);
    expect(sk).toBe('CONFIG');
    // The registration's shape version, as queue-registry.ts writes it (docs/contracts.md).
    expect(shapeVersion).toBe(1);
    // Listed by `dlq registrations` (one Query of the index), like a registration the CLI writes.
    expect([gsi1pk, gsi1sk]).toEqual(['REGISTRATIONS', DLQ_ARN]);
    expect(QueueRegistration.parse(registration)).toEqual({
      dlqArn: DLQ_ARN,
      owner: 'team-orders',
      approvers: ['U0123456789'],
      sampleSize: 5,
      rampRates: [5, 50, 200],
      dwellSeconds: 60,
      maxRedrives: 3,
      sourceQueueArns: [QUEUE_ARN],
      allowInventoryOfQueueWithRedrivePolicy: false,
      allowPreApproved: false,
    });
  });

  it('refuses at synth, by the same schema the functions use, a ramp that cannot work and approvers that are not Slack ids', () => {
    const { app, pipeline } = pipelineApp();
    const stack = new Stack(app, 'Consumer', { env: ENV });
    const { queue, dlq } = importedQueues(stack);
    let error: unknown;
    try {
      new MonitoredDlq(stack, 'Hostile', {
        pipeline,
        queue,
        dlq,
        rampRates: Array.from({ length: 12 }, (_, i) => (i + 1) * 10),
        approvers: ['alice', 'U0123456789', 'U0123456789'],
        slackChannel: '#orders',
      });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ValidationError);
    const message = (error as Error).message;
    expect(message).toMatch(/rampRates: must have at most 10 steps/);
    expect(message).toMatch(/approvers\.0: must be a Slack user id/);
    expect(message).toMatch(/approvers\.2: U0123456789 is listed twice/);
    expect(message).toMatch(/slackChannel: must be a Slack channel id/);
  });
});

describe('MonitoredDlq resources', () => {
  let pipelineTemplate: Template;
  let consumerTemplate: Template;
  let monitored: MonitoredDlq;
  let dlqLogicalId: string;

  beforeAll(() => {
    const { app, pipeline } = pipelineApp();
    const stack = new Stack(app, 'Consumer', { env: ENV });
    const key = new kms.Key(stack, 'SourceKey', { enableKeyRotation: true });
    const dlq = new sqs.Queue(stack, 'Dlq', { retentionPeriod: Duration.days(14), queueName: 'orders-dlq' });
    const queue = new sqs.Queue(stack, 'Orders', {
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: key,
      deadLetterQueue: { queue: dlq, maxReceiveCount: 5 },
    });
    monitored = new MonitoredDlq(stack, 'OrdersMonitored', {
      pipeline,
      queue,
      dlq,
      slackChannel: 'C0EXAMPLE00',
      approvers: ['U0EXAMPLE1'],
      producerKey: { attribute: 'order-id' },
    });
    app.synth();
    dlqLogicalId = stack.getLogicalId(dlq.node.defaultChild as sqs.CfnQueue);
    pipelineTemplate = Template.fromStack(pipeline);
    consumerTemplate = Template.fromStack(stack);
  });

  it('C04 alarms on ApproximateNumberOfMessagesVisible >= 1 and treats missing data as not breaching', () => {
    consumerTemplate.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'dlq-redrive-orders-dlq-visible',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms when the oldest message has used half of the DLQ retention period (14 days -> 604800 s)', () => {
    consumerTemplate.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'dlq-redrive-orders-dlq-oldest-age',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Threshold: 604_800,
      TreatMissingData: 'notBreaching',
    });
  });

  it('C01 routes exactly the two alarm ARNs to triage, on state changes only, and enables the rule', () => {
    const rules = alarmRules(pipelineTemplate);
    const [rule] = Object.values(rules);
    expect(Object.keys(rules)).toHaveLength(1);
    const pattern = rule?.Properties.EventPattern as Record<string, unknown[]>;
    expect(pattern.source).toEqual(['aws.cloudwatch']);
    expect(pattern['detail-type']).toEqual(['CloudWatch Alarm State Change']);
    expect(JSON.stringify(pattern.resources)).toContain(':alarm:dlq-redrive-orders-dlq-visible');
    expect(JSON.stringify(pattern.resources)).toContain(':alarm:dlq-redrive-orders-dlq-oldest-age');
    expect(pattern.resources).toHaveLength(2);
    expect(rule?.Properties.State).toBe('ENABLED');
    expect(monitored.routedAlarmArns).toHaveLength(2);
  });

  it('writes the registration item DLQ#<dlqArn> / CONFIG on create and update, deletes it on delete', () => {
    const resources = consumerTemplate.findResources('Custom::DlqRedriveRegistration');
    const [registration] = Object.values(resources);
    const create = JSON.stringify(registration?.Properties.Create);
    const update = JSON.stringify(registration?.Properties.Update);
    const remove = JSON.stringify(registration?.Properties.Delete);
    expect(create).toContain('\\"action\\":\\"putItem\\"');
    expect(create).toContain('\\"sk\\":{\\"S\\":\\"CONFIG\\"}');
    expect(create).toContain('\\"approvers\\":{\\"L\\":[{\\"S\\":\\"U0EXAMPLE1\\"}]}');
    expect(create).toContain('\\"producerKey\\":{\\"M\\":{\\"attribute\\":{\\"S\\":\\"order-id\\"}}}');
    expect(update).toBe(create);
    expect(remove).toContain('\\"action\\":\\"deleteItem\\"');
    expect(remove).toContain('\\"sk\\":{\\"S\\":\\"CONFIG\\"}');
  });

  it('scopes the registration writer to DLQ# partition keys of the pipeline table', () => {
    consumerTemplate.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: ['dynamodb:PutItem', 'dynamodb:DeleteItem'],
            Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['DLQ#*'] } },
          }),
        ]),
      },
    });
  });

  it('grants sqs:StartMessageMoveTask on the registered DLQ to the move-task role and to no other role', () => {
    const policies = consumerTemplate.findResources('AWS::IAM::Policy');
    const holders: string[] = [];
    for (const [id, policy] of Object.entries(policies)) {
      for (const statement of policy.Properties.PolicyDocument.Statement) {
        const actions = [statement.Action].flat();
        if (!actions.includes('sqs:StartMessageMoveTask')) continue;
        holders.push(JSON.stringify(policy.Properties.Roles));
        expect(statement.Resource, id).not.toBe('*');
        expect(statement.Resource).toEqual({ 'Fn::GetAtt': [dlqLogicalId, 'Arn'] });
      }
    }
    expect(holders).toHaveLength(1);
    expect(holders[0]).toContain('MoveTaskRole');
  });

  it('gives the roles that send to a KMS-encrypted source queue kms:GenerateDataKey on its key, and no others', () => {
    const policies = consumerTemplate.findResources('AWS::IAM::Policy');
    const withDataKey = Object.values(policies)
      .filter((policy) =>
        policy.Properties.PolicyDocument.Statement.some((s: { Action: unknown }) =>
          [s.Action].flat().includes('kms:GenerateDataKey'),
        ),
      )
      .map((policy) => JSON.stringify(policy.Properties.Roles));
    expect(withDataKey).toHaveLength(3);
    expect(withDataKey.join()).toContain('SampleRedriveRole');
    expect(withDataKey.join()).toContain('MoveTaskRole');
    expect(withDataKey.join()).toContain('MoverRole');
  });

  it('adds no reference from the pipeline stack to the consumer stack (no dependency cycle)', () => {
    expect(JSON.stringify(pipelineTemplate.toJSON())).not.toContain('Fn::ImportValue');
    expect(JSON.stringify(consumerTemplate.toJSON())).toContain('Fn::ImportValue');
  });
});

describe('KMS grants only on registered keys', () => {
  type Policy = {
    Properties: {
      Roles: unknown;
      PolicyDocument: { Statement: Array<{ Action: unknown; Resource: unknown }> };
    };
  };
  /** Role logical-id fragments holding each KMS action on a resource whose JSON contains `resource`. */
  const holders = (template: Template, action: string, resource: string) =>
    (Object.values(template.findResources('AWS::IAM::Policy')) as Policy[])
      .filter((policy) =>
        policy.Properties.PolicyDocument.Statement.some(
          (s) => [s.Action].flat().includes(action) && JSON.stringify(s.Resource).includes(resource),
        ),
      )
      .flatMap((policy) => {
        const roles = JSON.stringify(policy.Properties.Roles);
        return FUNCTION_NAMES.map(pascalOf).filter((fn) => new RegExp(`${fn}Role[0-9A-F]`).test(roles));
      })
      .sort();

  it('grants an imported DLQ key named by dlqEncryptionKey: decrypt to every DLQ reader, DescribeKey/GetKeyPolicy to preflight', () => {
    const { app, pipeline } = pipelineApp();
    const stack = new Stack(app, 'Imported', { env: ENV });
    const key = kms.Key.fromKeyArn(
      stack,
      'DlqKey',
      'arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    );
    new MonitoredDlq(stack, 'Monitored', {
      pipeline,
      queue: sqs.Queue.fromQueueArn(stack, 'Queue', QUEUE_ARN),
      dlq: sqs.Queue.fromQueueArn(stack, 'Dlq', DLQ_ARN),
      dlqEncryptionKey: key,
    });
    app.synth();
    const template = Template.fromStack(stack);

    // Preflight reads bodies too: the recheck inventories messages that arrived after triage.
    expect(holders(template, 'kms:Decrypt', '1234abcd-12ab-34cd-56ef-1234567890ab')).toEqual(
      [
        'ContinueInventory',
        'MoveTask',
        'Mover',
        'Park',
        'Preflight',
        'Reconcile',
        'SampleRedrive',
        'Triage',
        'VerifySample',
      ].sort(),
    );
    expect(holders(template, 'kms:GenerateDataKey', '1234abcd-12ab-34cd-56ef-1234567890ab')).toEqual([]);
    expect(holders(template, 'kms:DescribeKey', '1234abcd-12ab-34cd-56ef-1234567890ab')).toEqual([
      'Preflight',
    ]);
    expect(holders(template, 'kms:GetKeyPolicy', '1234abcd-12ab-34cd-56ef-1234567890ab')).toEqual([
      'Preflight',
    ]);
  });

  it('grants nothing on KMS for an imported queue whose key is not named (preflight refuses it before approval)', () => {
    const { app, pipeline } = pipelineApp();
    const stack = new Stack(app, 'Unnamed', { env: ENV });
    new MonitoredDlq(stack, 'Monitored', {
      pipeline,
      queue: sqs.Queue.fromQueueArn(stack, 'Queue', QUEUE_ARN),
      dlq: sqs.Queue.fromQueueArn(stack, 'Dlq', DLQ_ARN),
    });
    app.synth();
    expect(JSON.stringify(Template.fromStack(stack).toJSON())).not.toContain('kms:');
  });

  it('grants HeadObject (s3:GetObject) on payload objects and ListBucket on registered payload buckets to preflight and the ramp gate (MoveTask) only, and no delete', () => {
    const { app, pipeline } = pipelineApp();
    const stack = new Stack(app, 'Payloads', { env: ENV });
    new MonitoredDlq(stack, 'Monitored', {
      pipeline,
      queue: sqs.Queue.fromQueueArn(stack, 'Queue', QUEUE_ARN),
      dlq: sqs.Queue.fromQueueArn(stack, 'Dlq', DLQ_ARN),
      payloadBuckets: [s3.Bucket.fromBucketName(stack, 'Payloads', 'orders-large-payloads')],
    });
    app.synth();
    const template = Template.fromStack(stack);

    expect(holders(template, 's3:GetObject', 'orders-large-payloads/*').sort()).toEqual([
      'MoveTask',
      'Preflight',
    ]);
    expect(holders(template, 's3:ListBucket', 'orders-large-payloads').sort()).toEqual([
      'MoveTask',
      'Preflight',
    ]);
    const listOn = (Object.values(template.findResources('AWS::IAM::Policy')) as Policy[]).flatMap((p) =>
      p.Properties.PolicyDocument.Statement.filter((s) => [s.Action].flat().includes('s3:ListBucket')).map(
        (s) => JSON.stringify(s.Resource),
      ),
    );
    expect(listOn.every((r) => !r.includes('/*'))).toBe(true);
    expect(JSON.stringify(template.toJSON())).not.toMatch(/s3:Delete|s3:\*/);
  });

  it("gives park GenerateDataKey on the parking queue key, and preflight the users' role ARNs and KMS actions", () => {
    const app = templateOnlyApp();
    const keyStack = new Stack(app, 'Keys', { env: ENV });
    const parkingKey = new kms.Key(keyStack, 'ParkingKey', { enableKeyRotation: true });
    const pipeline = new PipelineStack(app, 'Pipeline', {
      env: ENV,
      functionsDir,
      parkingQueueEncryptionKey: parkingKey,
    });
    app.synth();
    const template = Template.fromStack(pipeline);
    template.hasResourceProperties('AWS::SQS::Queue', {
      KmsMasterKeyId: Match.objectLike({ 'Fn::ImportValue': Match.stringLikeRegexp('ParkingKey') }),
    });
    const withDataKey = (Object.values(template.findResources('AWS::IAM::Policy')) as Policy[]).filter(
      (policy) =>
        policy.Properties.PolicyDocument.Statement.some(
          (s) =>
            [s.Action].flat().includes('kms:GenerateDataKey') &&
            JSON.stringify(s.Resource).includes('ParkingKey'),
        ),
    );
    expect(withDataKey.map((p) => JSON.stringify(p.Properties.Roles))).toEqual([
      expect.stringContaining('ParkRole'),
    ]);

    const preflight = Object.values(template.findResources('AWS::Lambda::Function')).find((fn) =>
      String(fn.Properties.Description).startsWith('dlq-redrive preflight'),
    );
    const users = JSON.stringify(preflight?.Properties.Environment.Variables.PIPELINE_KEY_USERS);
    for (const [fn, role] of [
      ['triage', 'TriageRole'],
      ['park', 'ParkRole'],
      ['sample-redrive', 'SampleRedriveRole'],
      ['move-task', 'MoveTaskRole'],
    ])
      expect(users, fn).toMatch(new RegExp(`function[^a-z]+${fn}[^a-z][^}]*${role}`));
    expect(users).not.toContain('notify');
    const simulate = (Object.values(template.findResources('AWS::IAM::Policy')) as Policy[]).flatMap((p) =>
      p.Properties.PolicyDocument.Statement.filter((s) =>
        [s.Action].flat().includes('iam:SimulatePrincipalPolicy'),
      ),
    );
    expect(simulate).toHaveLength(1);
    expect(JSON.stringify(simulate[0]?.Resource)).toContain('ParkRole');
    expect(JSON.stringify(simulate[0]?.Resource)).not.toContain('NotifyRole');
  });
});

describe('alarm delivery', () => {
  it('keeps the rule disabled while no alarm is routed, so it never matches every alarm in the account', () => {
    const { app, pipeline } = pipelineApp();
    app.synth();

    Template.fromStack(pipeline).hasResourceProperties('AWS::Events::Rule', { State: 'DISABLED' });
  });

  it('with SNS delivery makes the encrypted topic the alarms action and creates no rule', () => {
    const { app, pipeline } = pipelineApp('sns');
    const stack = new Stack(app, 'Consumer', { env: ENV });
    const { queue, dlq } = importedQueues(stack);
    new MonitoredDlq(stack, 'OrdersMonitored', { pipeline, queue, dlq });
    app.synth();

    const pipelineTemplate = Template.fromStack(pipeline);
    expect(Object.keys(alarmRules(pipelineTemplate))).toHaveLength(0);
    pipelineTemplate.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
    pipelineTemplate.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'lambda' });
    const alarms = Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm');
    for (const alarm of Object.values(alarms)) {
      expect(JSON.stringify(alarm.Properties.AlarmActions)).toContain('AlarmTopic');
    }
    expect(Object.keys(alarms)).toHaveLength(2);
  });

  it('with both deliveries (rule and encrypted topic) leaves no open cdk-nag AwsSolutions finding', () => {
    const { app, pipeline } = pipelineApp('both');
    const stack = new Stack(app, 'Consumer', { env: ENV });
    const { queue, dlq } = importedQueues(stack);
    new MonitoredDlq(stack, 'OrdersMonitored', { pipeline, queue, dlq });
    app.synth();

    const report = new AwsSolutionsChecks(app).validateScope(app);

    expect(
      report.violations.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath)}`),
    ).toEqual([]);
    expect(Object.keys(alarmRules(Template.fromStack(pipeline)))).toHaveLength(1);
    Template.fromStack(pipeline).hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
  });
});

describe('DlqCompositeAlarm', () => {
  const twoDlqs = (delivery: AlarmDelivery = 'eventbridge') => {
    const { app, pipeline } = pipelineApp(delivery);
    const stack = new Stack(app, 'Team', { env: ENV });
    const dlqs = ['orders', 'payments'].map(
      (name) =>
        new MonitoredDlq(stack, `${name}Monitored`, {
          pipeline,
          queue: sqs.Queue.fromQueueArn(stack, `${name}Queue`, `arn:aws:sqs:us-east-1:111122223333:${name}`),
          dlq: sqs.Queue.fromQueueArn(stack, `${name}Dlq`, `arn:aws:sqs:us-east-1:111122223333:${name}-dlq`),
        }),
    );
    return { app, pipeline, stack, dlqs };
  };

  it("builds one composite over every registered DLQ's depth and age alarms and routes its state changes to triage", () => {
    const { app, pipeline, stack, dlqs } = twoDlqs();
    const composite = new DlqCompositeAlarm(stack, 'TeamDlqs', {
      pipeline,
      dlqs,
      compositeAlarmName: 'team-dlqs',
    });
    app.synth();

    const alarms = Template.fromStack(stack).findResources('AWS::CloudWatch::CompositeAlarm');
    const rule = JSON.stringify(Object.values(alarms)[0]?.Properties.AlarmRule);
    for (const child of dlqs.flatMap((d) => [d.depthAlarm, d.ageAlarm]))
      expect(rule).toContain(stack.getLogicalId(child.node.defaultChild as cloudwatch.CfnAlarm));
    expect(rule.match(/ALARM\(/g)).toHaveLength(4);
    expect(rule).toContain(' OR ');
    expect(pipeline.resolve(composite.routedAlarmArn)).toEqual({
      'Fn::Join': [
        '',
        ['arn:', { Ref: 'AWS::Partition' }, ':cloudwatch:us-east-1:111122223333:alarm:team-dlqs'],
      ],
    });
    const routing = JSON.stringify(Template.fromStack(pipeline).findResources('AWS::Events::Rule'));
    expect(routing).toContain('alarm:team-dlqs');
  });

  it('with SNS delivery makes the alarm topic its action', () => {
    const { app, pipeline, stack, dlqs } = twoDlqs('sns');
    const composite = new DlqCompositeAlarm(stack, 'TeamDlqs', {
      pipeline,
      dlqs,
      compositeAlarmName: 'team-dlqs',
      includeAgeAlarms: false,
    });
    app.synth();
    const props = Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::CompositeAlarm'))[0]
      ?.Properties;
    expect(composite.routedAlarmArn).toBeUndefined();
    expect(props.AlarmActions).toHaveLength(1);
    expect(JSON.stringify(props.AlarmRule).match(/ALARM\(/g)).toHaveLength(2);
  });

  it('rejects no DLQs and a bad name in one error naming each prop', () => {
    const { pipeline, stack } = twoDlqs();
    let error: unknown;
    try {
      new DlqCompositeAlarm(stack, 'Empty', { pipeline, dlqs: [], compositeAlarmName: '' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toContain('dlqs: must name at least one MonitoredDlq (given: none)');
    expect((error as Error).message).toContain(
      'compositeAlarmName: must be a literal of 1..255 characters (given: "")',
    );
  });
});

type Policy = {
  Properties: {
    Roles: unknown;
    PolicyDocument: { Statement: Array<{ Action: unknown; Resource: unknown }> };
  };
};
/** Every (action, resource) the stack grants to the role of `fn`, for actions of these services. */
const grantsOf = (template: Template, fn: string, services: RegExp) =>
  (Object.values(template.findResources('AWS::IAM::Policy')) as Policy[])
    .filter((p) => new RegExp(`${fn}Role[0-9A-F]`).test(JSON.stringify(p.Properties.Roles)))
    .flatMap((p) => p.Properties.PolicyDocument.Statement)
    .flatMap((s) =>
      [s.Action]
        .flat()
        .filter((a) => services.test(String(a)))
        .map((a) => `${a} ${JSON.stringify(s.Resource)}`),
    )
    .sort();

describe("the recording mover's origin and role grants", () => {
  const TOPIC = 'arn:aws:sns:us-east-1:111122223333:orders-events';
  const ROLE = 'arn:aws:iam::444455556666:role/dlq-redrive-target';

  it('grants sns:Publish on the registered topic and sts:AssumeRole on exactly the registered role, to the mover only', () => {
    const { app, pipeline } = pipelineApp();
    const stack = new Stack(app, 'SnsOrigin', { env: ENV });
    new MonitoredDlq(stack, 'Monitored', {
      pipeline,
      ...importedQueues(stack),
      origin: { kind: 'sns', topicArn: TOPIC },
      accessRoles: [{ accountId: '444455556666', region: 'eu-west-1', roleArn: ROLE }],
    });
    app.synth();
    const template = Template.fromStack(stack);
    expect(grantsOf(template, 'Mover', /^(sns|sts|events):|^lambda:Invoke/)).toEqual(
      [`sns:Publish "${TOPIC}"`, `sts:AssumeRole "${ROLE}"`].sort(),
    );
    for (const other of FUNCTION_NAMES.map(pascalOf).filter((n) => n !== 'Mover'))
      expect(grantsOf(template, other, /^(sns|sts|events):/), other).toEqual([]);
  });

  it('grants lambda:InvokeFunction on the registered function and nothing on STS without registered roles', () => {
    const { app, pipeline } = pipelineApp();
    const stack = new Stack(app, 'LambdaOrigin', { env: ENV });
    const fn = 'arn:aws:lambda:us-east-1:111122223333:function:orders-worker';
    new MonitoredDlq(stack, 'Monitored', {
      pipeline,
      ...importedQueues(stack),
      origin: { kind: 'lambda', functionArn: fn },
    });
    app.synth();
    expect(grantsOf(Template.fromStack(stack), 'Mover', /^(sns|sts|events):|^lambda:Invoke/)).toEqual([
      `lambda:InvokeFunction "${fn}"`,
    ]);
  });

  it('refuses a malformed access role by field, naming the value given', () => {
    const { app, pipeline } = pipelineApp();
    const stack = new Stack(app, 'BadRole', { env: ENV });
    expect(
      () =>
        new MonitoredDlq(stack, 'Monitored', {
          pipeline,
          ...importedQueues(stack),
          accessRoles: [{ accountId: '444455556666', roleArn: 'not-a-role' }],
        }),
    ).toThrow(/accessRoles\.0\.roleArn: must be an IAM role ARN/);
  });
});

describe('PipelineStack as an IRedrivePipeline of another app', () => {
  it('names every function role and the way alarms reach triage in its PipelineAttributes output', () => {
    const { app, pipeline } = pipelineApp('sns');
    app.synth();
    const attributes = pipeline.attributes();
    const output = Template.fromStack(pipeline).toJSON().Outputs.PipelineAttributes;

    expect(Object.keys(attributes.roleArns).sort()).toEqual([...FUNCTION_NAMES].sort());
    expect(attributes.triageFunctionArn).toBeUndefined();
    expect(attributes.alarmTopicArn).toBeDefined();
    expect(attributes.stackName).toBe('Pipeline');
    expect(output.Value).toEqual(pipeline.resolve(pipeline.toJsonString(attributes)));
  });
});

describe("a registration's own parking queue", () => {
  /** The SQS actions granted to the role of `fn` on exactly `resource`. */
  const actionsOn = (template: Template, fn: string, resource: unknown) =>
    grantsOf(template, fn, /^sqs:/)
      .filter((grant) => grant.endsWith(` ${JSON.stringify(resource)}`))
      .map((grant) => grant.split(' ')[0]);

  it('registers parkingQueueArn and grants Park its send and attributes, the mover its un-park, on that queue only', () => {
    const { app, pipeline } = pipelineApp();
    const stack = new Stack(app, 'OwnParking', { env: ENV });
    const parking = new sqs.Queue(stack, 'OrdersParking');
    const monitored = new MonitoredDlq(stack, 'Monitored', {
      pipeline,
      ...importedQueues(stack),
      parkingQueue: parking,
    });
    app.synth();
    const template = Template.fromStack(stack);
    const arn = { 'Fn::GetAtt': [stack.getLogicalId(parking.node.defaultChild as sqs.CfnQueue), 'Arn'] };

    expect(stack.resolve(monitored.registration.parkingQueueArn)).toEqual(arn);
    expect(actionsOn(template, 'Park', arn)).toEqual([
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:SendMessage',
    ]);
    expect(actionsOn(template, 'Mover', arn)).toEqual([
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:ReceiveMessage',
    ]);
    expect(actionsOn(template, 'Triage', arn)).toEqual([]);
  });

  it('refuses a parking queue of another type than the DLQ, by field', () => {
    const { app, pipeline } = pipelineApp();
    const stack = new Stack(app, 'FifoParking', { env: ENV });
    expect(
      () =>
        new MonitoredDlq(stack, 'Monitored', {
          pipeline,
          ...importedQueues(stack),
          parkingQueue: new sqs.Queue(stack, 'P', { fifo: true }),
        }),
    ).toThrow(/parkingQueueArn: must be a standard queue like the DLQ/);
  });
});
