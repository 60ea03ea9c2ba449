/**
 * The stand-ins of the recording mover's targets (SNS, EventBridge, Lambda) and of STS answer the
 * real SDK v3 clients (3.1164.0) in their wire protocols (awsQuery, awsJson 1.1, restJson1), and
 * dead-letter what their local handlers fail the way the real services do.
 */
import {
  EventBridgeClient,
  PutEventsCommand,
  PutRuleCommand,
  PutTargetsCommand,
} from '@aws-sdk/client-eventbridge';
import { InvokeCommand, LambdaClient, ResourceNotFoundException } from '@aws-sdk/client-lambda';
import {
  CreateTopicCommand,
  NotFoundException,
  PublishBatchCommand,
  PublishCommand,
  SNSClient,
  SubscribeCommand,
} from '@aws-sdk/client-sns';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { AssumeRoleCommand, GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEnvelope } from '#inventory/envelope.js';
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
async function queue(name: string) {
  return (await sqs.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl as string;
}
const envelopeOf = (m: Parameters<typeof buildEnvelope>[0]) =>
  buildEnvelope(m, {
    dlqArn: 'arn:aws:sqs:us-east-1:123456789012:x',
    fifo: false,
    retentionPeriodSeconds: 345_600,
    now: Date.now(),
    registration: {},
  }).envelope;

describe('SNS stand-in (awsQuery)', () => {
  it('publishes with attributes to a raw and a non-raw queue subscription and answers a MessageId', async () => {
    const sns = new SNSClient({});
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'orders-events' }));
    const rawUrl = await queue('orders-raw');
    const wrappedUrl = await queue('orders-wrapped');
    await sns.send(
      new SubscribeCommand({
        TopicArn,
        Protocol: 'sqs',
        Endpoint: arnOf('orders-raw'),
        Attributes: { RawMessageDelivery: 'true' },
      }),
    );
    await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: arnOf('orders-wrapped') }));
    const out = await sns.send(
      new PublishCommand({
        TopicArn,
        Message: '{"orderId":"o-1"}',
        MessageAttributes: { tenant: { DataType: 'String', StringValue: 'acme & co' } },
      }),
    );
    expect(out.MessageId).toMatch(/^[0-9a-f-]{36}$/);
    await stack.standins.deliveries.idle();
    const [raw] = await drain(sqs, rawUrl);
    const [wrapped] = await drain(sqs, wrappedUrl);
    expect([raw?.Body, raw?.MessageAttributes?.tenant?.StringValue]).toEqual([
      '{"orderId":"o-1"}',
      'acme & co',
    ]);
    expect(JSON.parse(wrapped?.Body ?? '{}')).toMatchObject({
      Type: 'Notification',
      MessageId: out.MessageId,
      TopicArn,
      Message: '{"orderId":"o-1"}',
      MessageAttributes: { tenant: { Type: 'String', Value: 'acme & co' } },
    });
    sns.destroy();
  });

  it('answers PublishBatch per entry and a missing topic with NotFoundException', async () => {
    const sns = new SNSClient({});
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'batch-topic' }));
    const out = await sns.send(
      new PublishBatchCommand({
        TopicArn,
        PublishBatchRequestEntries: [
          { Id: 'a', Message: 'one' },
          { Id: 'b', Message: 'two', MessageAttributes: { k: { DataType: 'Number', StringValue: '2' } } },
        ],
      }),
    );
    expect(out.Successful?.map((s) => s.Id)).toEqual(['a', 'b']);
    expect(
      stack.standins.sns.published.filter((p) => p.topicArn === TopicArn).map((p) => p.attributes),
    ).toEqual([{}, { k: { DataType: 'Number', StringValue: '2' } }]);
    await expect(
      sns.send(new PublishCommand({ TopicArn: `${TopicArn}-gone`, Message: 'x' })),
    ).rejects.toBeInstanceOf(NotFoundException);
    sns.destroy();
  });

  it('C12 dead-letters what an HTTP endpoint keeps failing, non-raw, with RequestID, ErrorCode and ErrorMessage', async () => {
    const sns = new SNSClient({});
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'webhook-topic' }));
    const dlqUrl = await queue('webhook-dlq');
    stack.standins.handlers.define('https://partner.example/hook', () => {
      throw Object.assign(new Error('endpoint returned HTTP 503'), { code: '503' });
    });
    await sns.send(
      new SubscribeCommand({
        TopicArn,
        Protocol: 'https',
        Endpoint: 'https://partner.example/hook',
        Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf('webhook-dlq') }) },
      }),
    );
    await sns.send(new PublishCommand({ TopicArn, Message: '{"orderId":"o-2"}' }));
    await stack.standins.deliveries.idle();
    const [letter] = await drain(sqs, dlqUrl);
    const envelope = envelopeOf(letter ?? {});
    expect(envelope.origin).toEqual({ kind: 'sns', arn: TopicArn, via: 'subscription-dlq' });
    expect(envelope.failure).toMatchObject({
      errorClass: 'SNS.ErrorCode.503',
      errorMessage: 'endpoint returned HTTP 503',
    });
    expect(
      stack.standins.deliveries.log.filter((d) => d.target === 'https://partner.example/hook'),
    ).toHaveLength(4);
    sns.destroy();
  });
});

describe('Lambda stand-in (restJson1)', () => {
  it('runs an async invocation with retries and sends the failed event to the function DLQ as Lambda does', async () => {
    const dlqUrl = await queue('ship-order-dlq');
    const arn = stack.standins.lambda.defineFunction({
      name: 'ship-order',
      deadLetterArn: arnOf('ship-order-dlq'),
      handler: () => {
        throw Object.assign(new Error('carrier API returned 503'), { name: 'CarrierUnavailableError' });
      },
    });
    const lambda = new LambdaClient({});
    const out = await lambda.send(
      new InvokeCommand({
        FunctionName: arn,
        InvocationType: 'Event',
        Payload: Buffer.from('{"orderId":"o-3"}'),
      }),
    );
    expect(out.StatusCode).toBe(202);
    await stack.standins.deliveries.idle();
    const [letter] = await drain(sqs, dlqUrl);
    expect(letter?.Body).toBe('{"orderId":"o-3"}');
    const envelope = envelopeOf(letter ?? {});
    expect([envelope.origin?.kind, envelope.origin?.via, envelope.failure.errorClass]).toEqual([
      'lambda',
      'async-dlq',
      'CarrierUnavailableError',
    ]);
    expect(stack.standins.deliveries.log.filter((d) => d.target === arn).map((d) => d.attempt)).toEqual([
      1, 2, 3,
    ]);
    lambda.destroy();
  });

  it('sends an invocation record to an on-failure destination and answers an unknown function with ResourceNotFoundException', async () => {
    const destUrl = await queue('ship-order-failures');
    const arn = stack.standins.lambda.defineFunction({
      name: 'ship-order-2',
      onFailureArn: arnOf('ship-order-failures'),
      maximumRetryAttempts: 0,
      handler: () => {
        throw new Error('boom');
      },
    });
    const lambda = new LambdaClient({});
    await lambda.send(
      new InvokeCommand({
        FunctionName: 'ship-order-2',
        InvocationType: 'Event',
        Payload: Buffer.from('{"a":1}'),
      }),
    );
    await stack.standins.deliveries.idle();
    const [record] = await drain(sqs, destUrl);
    const envelope = envelopeOf(record ?? {});
    expect(envelope.origin).toEqual({ kind: 'lambda', arn, via: 'on-failure-destination' });
    expect(envelope.failure.errorMessage).toBe('boom; condition RetriesExhausted');
    await expect(
      lambda.send(
        new InvokeCommand({ FunctionName: 'nope', InvocationType: 'Event', Payload: Buffer.from('{}') }),
      ),
    ).rejects.toBeInstanceOf(ResourceNotFoundException);
    lambda.destroy();
  });
});

describe('EventBridge stand-in (awsJson 1.1)', () => {
  it("delivers a put event to its rule's target and dead-letters it with the rule, target and error", async () => {
    const dlqUrl = await queue('ship-rule-dlq');
    const target = stack.standins.lambda.defineFunction({
      name: 'ship-target',
      handler: () => {
        throw Object.assign(new Error('Rate exceeded'), { code: 'THROTTLING' });
      },
    });
    const events = new EventBridgeClient({});
    await events.send(
      new PutRuleCommand({ Name: 'ship', EventPattern: JSON.stringify({ source: ['com.example.orders'] }) }),
    );
    await events.send(
      new PutTargetsCommand({
        Rule: 'ship',
        Targets: [
          {
            Id: 't1',
            Arn: target,
            DeadLetterConfig: { Arn: arnOf('ship-rule-dlq') },
            RetryPolicy: { MaximumRetryAttempts: 1 },
          },
        ],
      }),
    );
    const time = new Date('2026-01-02T08:00:00Z');
    const out = await events.send(
      new PutEventsCommand({
        Entries: [
          {
            Source: 'com.example.orders',
            DetailType: 'OrderPlaced',
            Detail: '{"orderId":"o-4"}',
            Time: time,
          },
          { Source: 'aws.ec2', DetailType: 'x', Detail: '{}' },
        ],
      }),
    );
    expect([out.FailedEntryCount, out.Entries?.[1]?.ErrorCode]).toEqual([
      1,
      'NotAuthorizedForSourceException',
    ]);
    await stack.standins.deliveries.idle();
    const [letter] = await drain(sqs, dlqUrl);
    const envelope = envelopeOf(letter ?? {});
    expect(envelope.origin).toMatchObject({
      kind: 'eventbridge',
      arn: `arn:aws:events:${stack.region}:${stack.accountId}:event-bus/default`,
      ruleArn: `arn:aws:events:${stack.region}:${stack.accountId}:rule/ship`,
      targetArn: target,
    });
    expect(envelope.failure).toMatchObject({ errorClass: 'THROTTLING' });
    expect(JSON.parse(letter?.Body ?? '{}')).toMatchObject({
      time: '2026-01-02T08:00:00Z',
      detail: { orderId: 'o-4' },
    });
    events.destroy();
  });
});

describe('STS stand-in (awsQuery)', () => {
  it('hands out credentials only for an allowed role, and its access key names the role', async () => {
    const roleArn = 'arn:aws:iam::444455556666:role/dlq-redrive-sender';
    const sts = new STSClient({});
    await expect(
      sts.send(new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: 's' })),
    ).rejects.toMatchObject({
      name: 'AccessDenied',
    });
    stack.standins.sts.allowRole(roleArn, { externalId: 'ext-1' });
    const out = await sts.send(
      new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: 's', ExternalId: 'ext-1' }),
    );
    const key = out.Credentials?.AccessKeyId as string;
    expect([stack.standins.sts.roleOf(key), out.Credentials?.Expiration instanceof Date]).toEqual([
      roleArn,
      true,
    ]);
    const assumed = new STSClient({
      credentials: {
        accessKeyId: key,
        secretAccessKey: out.Credentials?.SecretAccessKey as string,
        sessionToken: out.Credentials?.SessionToken as string,
      },
    });
    expect((await assumed.send(new GetCallerIdentityCommand({}))).Account).toBe('444455556666');
    sts.destroy();
    assumed.destroy();
  });
});
