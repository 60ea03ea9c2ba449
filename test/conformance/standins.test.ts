/**
 * Conformance: the small stand-ins of local/aws-standins/ (CloudWatch with EventBridge, SNS,
 * Lambda, KMS, STS) behave as the services do where the pipeline depends on it. Each test cites
 * the page it comes from; one local stack serves them all.
 */
import { CloudWatchClient, PutMetricAlarmCommand, SetAlarmStateCommand } from '@aws-sdk/client-cloudwatch';
import { EventBridgeClient, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import {
  CreateKeyCommand,
  DecryptCommand,
  DisableKeyCommand,
  GenerateDataKeyCommand,
  KMSClient,
} from '@aws-sdk/client-kms';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { CreateTopicCommand, PublishCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventBridgeAlarmEvent, STATE_CHANGE } from '../../functions/triage/alarm-event.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { drain } from '../support/redrive-fixtures.js';

let stack: LocalStack;
let sqs: SQSClient;
beforeAll(async () => {
  stack = await startLocalStack();
  sqs = new SQSClient({});
});
afterAll(async () => {
  sqs?.destroy();
  await stack?.stop();
});

const arnOf = (name: string) => `arn:aws:sqs:${stack.region}:${stack.accountId}:${name}`;
const queue = async (name: string) =>
  (await sqs.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl as string;
const errorName = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { name?: string }) => e.name,
  );

describe('alarm events @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html', () => {
  it('C01 C04 delivers each state change to a rule on source and detail-type, in the shape triage parses, and nothing for an unchanged state', async () => {
    const received: unknown[] = [];
    const target = stack.standins.lambda.defineFunction({
      name: 'triage-c01',
      handler: (e) => void received.push(e),
    });
    const events = new EventBridgeClient({});
    await events.send(
      new PutRuleCommand({
        Name: 'dlq-alarms',
        EventPattern: JSON.stringify({ source: ['aws.cloudwatch'], 'detail-type': [STATE_CHANGE] }),
      }),
    );
    await events.send(new PutTargetsCommand({ Rule: 'dlq-alarms', Targets: [{ Id: 't', Arn: target }] }));
    const cw = new CloudWatchClient({});
    await cw.send(
      new PutMetricAlarmCommand({
        AlarmName: 'orders-dlq-not-empty',
        AlarmDescription: 'DLQ has visible messages',
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: 'orders-dlq' }],
        Statistic: 'Maximum',
        Period: 60,
        EvaluationPeriods: 1,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
      }),
    );
    const set = (value: 'OK' | 'ALARM') =>
      cw.send(
        new SetAlarmStateCommand({
          AlarmName: 'orders-dlq-not-empty',
          StateValue: value,
          StateReason: value,
        }),
      );
    await set('ALARM');
    await set('ALARM');
    await set('OK');
    await stack.standins.deliveries.idle();
    const parsed = received.map((e) => EventBridgeAlarmEvent.parse(e));
    expect(parsed.map((e) => [e.detail.previousState?.value, e.detail.state.value])).toEqual([
      ['INSUFFICIENT_DATA', 'ALARM'],
      ['ALARM', 'OK'],
    ]);
    const first = received[0] as Record<string, unknown> & { detail: { configuration: unknown } };
    expect([first.source, first['detail-type'], first.resources]).toEqual([
      'aws.cloudwatch',
      STATE_CHANGE,
      [stack.standins.cloudwatch.alarmArn('orders-dlq-not-empty')],
    ]);
    expect(first.detail.configuration).toMatchObject({
      description: 'DLQ has visible messages',
      metrics: [
        {
          metricStat: {
            metric: {
              namespace: 'AWS/SQS',
              name: 'ApproximateNumberOfMessagesVisible',
              dimensions: { QueueName: 'orders-dlq' },
            },
            period: 60,
            stat: 'Maximum',
          },
          returnData: true,
        },
      ],
    });
    expect(parsed[0]?.detail.state.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000$/);
    events.destroy();
    cw.destroy();
  });
});

describe('SNS to SQS @see https://docs.aws.amazon.com/sns/latest/dg/sns-large-payload-raw-message-delivery.html', () => {
  // @see https://docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html
  it('C12 wraps a non-raw delivery in the notification JSON with its attributes inside, and a raw one not at all', async () => {
    const sns = new SNSClient({});
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'c12-events' }));
    const rawUrl = await queue('c12-raw');
    const wrappedUrl = await queue('c12-wrapped');
    await sns.send(
      new SubscribeCommand({
        TopicArn,
        Protocol: 'sqs',
        Endpoint: arnOf('c12-raw'),
        Attributes: { RawMessageDelivery: 'true' },
      }),
    );
    await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: arnOf('c12-wrapped') }));
    const { MessageId } = await sns.send(
      new PublishCommand({
        TopicArn,
        Message: '{"orderId":"o-8"}',
        MessageAttributes: { tenant: { DataType: 'String', StringValue: 'acme' } },
      }),
    );
    await stack.standins.deliveries.idle();
    const [raw] = await drain(sqs, rawUrl);
    const [wrapped] = await drain(sqs, wrappedUrl);
    expect([raw?.Body, raw?.MessageAttributes?.tenant]).toEqual([
      '{"orderId":"o-8"}',
      { DataType: 'String', StringValue: 'acme' },
    ]);
    expect(wrapped?.MessageAttributes ?? {}).toEqual({});
    const body = JSON.parse(wrapped?.Body ?? '{}') as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual([
      'Message',
      'MessageAttributes',
      'MessageId',
      'Signature',
      'SignatureVersion',
      'SigningCertURL',
      'Timestamp',
      'TopicArn',
      'Type',
      'UnsubscribeURL',
    ]);
    expect([body.Type, body.MessageId, body.TopicArn, body.Message, body.MessageAttributes]).toEqual([
      'Notification',
      MessageId,
      TopicArn,
      '{"orderId":"o-8"}',
      { tenant: { Type: 'String', Value: 'acme' } },
    ]);
    sns.destroy();
  });

  // @see https://docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html
  it('dead-letters a failed Lambda delivery with RequestID, ErrorCode and ErrorMessage as message attributes', async () => {
    const sns = new SNSClient({});
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'dlq-events' }));
    const dlqUrl = await queue('sub-dlq');
    const fn = stack.standins.lambda.defineFunction({
      name: 'sub-fails',
      handler: () => {
        throw new Error('consumer down');
      },
    });
    await sns.send(
      new SubscribeCommand({
        TopicArn,
        Protocol: 'lambda',
        Endpoint: fn,
        Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf('sub-dlq') }) },
      }),
    );
    await sns.send(new PublishCommand({ TopicArn, Message: 'payload' }));
    await stack.standins.deliveries.idle();
    const [letter] = await drain(sqs, dlqUrl);
    expect(Object.keys(letter?.MessageAttributes ?? {}).sort()).toEqual([
      'ErrorCode',
      'ErrorMessage',
      'RequestID',
    ]);
    expect((JSON.parse(letter?.Body ?? '{}') as { Message?: string }).Message).toBe('payload');
    sns.destroy();
  });
});

describe('Lambda asynchronous invoke @see https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html', () => {
  it('answers InvocationType Event with 202 and no payload, before the function has run', async () => {
    let ran = 0;
    const arn = stack.standins.lambda.defineFunction({
      name: 'async-202',
      handler: () => {
        ran += 1;
      },
    });
    const lambda = new LambdaClient({});
    const out = await lambda.send(
      new InvokeCommand({ FunctionName: arn, InvocationType: 'Event', Payload: Buffer.from('{}') }),
    );
    expect([out.StatusCode, out.FunctionError, out.Payload?.length ?? 0]).toEqual([202, undefined, 0]);
    await stack.standins.deliveries.idle();
    expect(ran).toBe(1);
    lambda.destroy();
  });

  it('answers RequestResponse with 200 and X-Amz-Function-Error Unhandled when the function throws', async () => {
    const arn = stack.standins.lambda.defineFunction({
      name: 'sync-throws',
      handler: () => {
        throw Object.assign(new Error('boom'), { name: 'BoomError' });
      },
    });
    const lambda = new LambdaClient({});
    const out = await lambda.send(new InvokeCommand({ FunctionName: arn, Payload: Buffer.from('{}') }));
    expect([out.StatusCode, out.FunctionError]).toEqual([200, 'Unhandled']);
    expect(JSON.parse(Buffer.from(out.Payload ?? []).toString()).errorType).toBe('BoomError');
    lambda.destroy();
  });
});

describe('KMS key states @see https://docs.aws.amazon.com/kms/latest/developerguide/key-state.html', () => {
  // @see https://docs.aws.amazon.com/kms/latest/APIReference/API_Decrypt.html
  it('refuses Decrypt and GenerateDataKey of a disabled key with DisabledException', async () => {
    const kms = new KMSClient({});
    const { KeyMetadata } = await kms.send(new CreateKeyCommand({}));
    const KeyId = KeyMetadata?.KeyId as string;
    const { CiphertextBlob } = await kms.send(new GenerateDataKeyCommand({ KeyId, KeySpec: 'AES_256' }));
    await kms.send(new DisableKeyCommand({ KeyId }));
    expect(await errorName(kms.send(new DecryptCommand({ CiphertextBlob })))).toBe('DisabledException');
    expect(await errorName(kms.send(new GenerateDataKeyCommand({ KeyId, KeySpec: 'AES_256' })))).toBe(
      'DisabledException',
    );
    kms.destroy();
  });
});

describe('STS AssumeRole @see https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRole.html', () => {
  it('answers the assumed-role ARN and credentials with an expiration, and AccessDenied for a role that does not trust the caller', async () => {
    const roleArn = `arn:aws:iam::210987654321:role/dlq-mover`;
    stack.standins.sts.allowRole(roleArn);
    const sts = new STSClient({});
    const out = await sts.send(new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: 'redrive-1' }));
    expect(out.AssumedRoleUser?.Arn).toBe('arn:aws:sts::210987654321:assumed-role/dlq-mover/redrive-1');
    expect(out.Credentials?.Expiration?.getTime()).toBeGreaterThan(Date.now());
    expect(out.Credentials?.SessionToken).toBeTruthy();
    expect(
      await errorName(sts.send(new AssumeRoleCommand({ RoleArn: `${roleArn}-other`, RoleSessionName: 's' }))),
    ).toBe('AccessDenied');
    sts.destroy();
  });
});
