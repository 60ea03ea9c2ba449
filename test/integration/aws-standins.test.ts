/**
 * The local stand-ins of `local/aws-standins/` answer the real SDK v3 clients (3.1164.0) in their
 * wire protocols: what a client parses from them is what the pipeline will see.
 */
import {
  CloudWatchClient,
  DescribeAlarmsCommand,
  PutCompositeAlarmCommand,
  PutMetricAlarmCommand,
  SetAlarmStateCommand,
} from '@aws-sdk/client-cloudwatch';
import {
  CreateAliasCommand,
  CreateKeyCommand,
  DescribeKeyCommand,
  DisableKeyCommand,
  GenerateDataKeyCommand,
  KMSClient,
  ScheduleKeyDeletionCommand,
} from '@aws-sdk/client-kms';
import { CreateBucketCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compositeReasonData } from '../../local/aws-standins/cloudwatch.js';
import { StandinError } from '../../local/aws-standins/server.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('CloudWatch stand-in (awsJson 1.0, query-compatible errors)', () => {
  const cw = () => new CloudWatchClient({});

  it('describes metric alarms by default and composite alarms only when AlarmTypes asks, with state and reason data', async () => {
    await cw().send(
      new PutMetricAlarmCommand({
        AlarmName: 'orders-dlq-depth',
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: 'orders-dlq' }],
        Statistic: 'Maximum',
        Period: 60,
        EvaluationPeriods: 1,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      }),
    );
    await cw().send(
      new PutCompositeAlarmCommand({ AlarmName: 'all-dlqs', AlarmRule: 'ALARM(orders-dlq-depth)' }),
    );
    const reasonData = compositeReasonData([
      {
        arn: stack.standins.cloudwatch.alarmArn('orders-dlq-depth'),
        state: 'ALARM',
        timestamp: '2026-01-02T10:35:00.000+0000',
      },
    ]);
    await cw().send(
      new SetAlarmStateCommand({
        AlarmName: 'all-dlqs',
        StateValue: 'ALARM',
        StateReason: 'child',
        StateReasonData: reasonData,
      }),
    );

    const metricOnly = await cw().send(
      new DescribeAlarmsCommand({ AlarmNames: ['orders-dlq-depth', 'all-dlqs'] }),
    );
    expect(metricOnly.MetricAlarms?.map((a) => a.Dimensions)).toEqual([
      [{ Name: 'QueueName', Value: 'orders-dlq' }],
    ]);
    expect(metricOnly.CompositeAlarms ?? []).toEqual([]);

    const both = await cw().send(
      new DescribeAlarmsCommand({ AlarmNames: ['all-dlqs'], AlarmTypes: ['CompositeAlarm', 'MetricAlarm'] }),
    );
    expect(both.CompositeAlarms?.[0]?.StateValue).toBe('ALARM');
    expect(both.CompositeAlarms?.[0]?.StateReasonData).toBe(reasonData);
    expect(both.CompositeAlarms?.[0]?.StateUpdatedTimestamp).toBeInstanceOf(Date);
  });

  it('pages DescribeAlarms with NextToken', async () => {
    for (const n of [1, 2, 3])
      await cw().send(
        new PutMetricAlarmCommand({
          AlarmName: `page-${n}`,
          Namespace: 'AWS/SQS',
          MetricName: 'ApproximateAgeOfOldestMessage',
          Statistic: 'Maximum',
          Period: 60,
          EvaluationPeriods: 1,
          Threshold: 60,
          ComparisonOperator: 'GreaterThanThreshold',
        }),
      );
    const first = await cw().send(new DescribeAlarmsCommand({ AlarmNamePrefix: 'page-', MaxRecords: 2 }));
    const second = await cw().send(
      new DescribeAlarmsCommand({ AlarmNamePrefix: 'page-', MaxRecords: 2, NextToken: first.NextToken }),
    );
    expect([...(first.MetricAlarms ?? []), ...(second.MetricAlarms ?? [])].map((a) => a.AlarmName)).toEqual([
      'page-1',
      'page-2',
      'page-3',
    ]);
    expect(second.NextToken).toBeUndefined();
  });

  it('answers errors the SDK names like CloudWatch does (ResourceNotFound, an injected AccessDenied)', async () => {
    await expect(
      cw().send(new SetAlarmStateCommand({ AlarmName: 'no-such-alarm', StateValue: 'OK', StateReason: 'x' })),
    ).rejects.toMatchObject({ name: 'ResourceNotFound', $metadata: { httpStatusCode: 404 } });
    stack.standins.cloudwatch.fail({
      operation: 'DescribeAlarms',
      error: new StandinError('AccessDenied', 'not authorized to perform cloudwatch:DescribeAlarms', 403),
      times: 1,
    });
    await expect(cw().send(new DescribeAlarmsCommand({}))).rejects.toMatchObject({ name: 'AccessDenied' });
    await expect(cw().send(new DescribeAlarmsCommand({ AlarmNames: ['none'] }))).resolves.toMatchObject({
      MetricAlarms: [],
    });
    expect(stack.standins.cloudwatch.calls.filter((c) => c.error === 'AccessDenied')).toHaveLength(1);
  });
});

describe('KMS stand-in (awsJson 1.1)', () => {
  const kms = () => new KMSClient({});

  it('resolves a key by id, ARN, alias name and alias ARN, and knows the AWS managed alias/aws/sqs', async () => {
    const { KeyMetadata } = await kms().send(new CreateKeyCommand({ Description: 'orders' }));
    await kms().send(new CreateAliasCommand({ AliasName: 'alias/orders', TargetKeyId: KeyMetadata?.KeyId }));
    const arn = KeyMetadata?.Arn as string;
    for (const keyId of [
      KeyMetadata?.KeyId,
      arn,
      'alias/orders',
      `arn:aws:kms:us-east-1:${stack.accountId}:alias/orders`,
    ]) {
      const out = await kms().send(new DescribeKeyCommand({ KeyId: keyId }));
      expect(out.KeyMetadata?.Arn).toBe(arn);
    }
    const managed = await kms().send(new DescribeKeyCommand({ KeyId: 'alias/aws/sqs' }));
    expect(managed.KeyMetadata?.KeyManager).toBe('AWS');
    expect(KeyMetadata?.KeyManager).toBe('CUSTOMER');
  });

  it('refuses data keys of disabled and pending-deletion keys with the KMS error names', async () => {
    const disabled = (await kms().send(new CreateKeyCommand({}))).KeyMetadata?.KeyId as string;
    const deleting = (await kms().send(new CreateKeyCommand({}))).KeyMetadata?.KeyId as string;
    await kms().send(new DisableKeyCommand({ KeyId: disabled }));
    await kms().send(new ScheduleKeyDeletionCommand({ KeyId: deleting, PendingWindowInDays: 7 }));
    await expect(
      kms().send(new GenerateDataKeyCommand({ KeyId: disabled, KeySpec: 'AES_256' })),
    ).rejects.toMatchObject({
      name: 'DisabledException',
    });
    await expect(
      kms().send(new GenerateDataKeyCommand({ KeyId: deleting, KeySpec: 'AES_256' })),
    ).rejects.toMatchObject({
      name: 'KMSInvalidStateException',
    });
    const state = await kms().send(new DescribeKeyCommand({ KeyId: deleting }));
    expect(state.KeyMetadata?.KeyState).toBe('PendingDeletion');
    await expect(kms().send(new DescribeKeyCommand({ KeyId: 'alias/none' }))).rejects.toMatchObject({
      name: 'NotFoundException',
    });
  });
});

describe('S3 stand-in (s3rver behind the call record)', () => {
  it('serves path-style requests at the IP endpoint and records HeadObject calls, a missing object as NotFound', async () => {
    const s3 = new S3Client({});
    await s3.send(new CreateBucketCommand({ Bucket: 'standin-payloads' }));
    await s3.send(new PutObjectCommand({ Bucket: 'standin-payloads', Key: 'a/b.json', Body: '{"x":1}' }));
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'standin-payloads', Key: 'a/b.json' }));
    expect(head.ContentLength).toBe(7);
    await expect(
      s3.send(new HeadObjectCommand({ Bucket: 'standin-payloads', Key: 'gone.json' })),
    ).rejects.toMatchObject({
      name: 'NotFound',
      $metadata: { httpStatusCode: 404 },
    });
    const heads = stack.standins.s3.calls.filter((c) => c.operation === 'HeadObject');
    expect(heads.map((c) => [c.input.Key, c.error ?? 'ok'])).toEqual([
      ['a/b.json', 'ok'],
      ['gone.json', '404'],
    ]);
  });
});
