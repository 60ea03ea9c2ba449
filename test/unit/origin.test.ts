import { readFileSync } from 'node:fs';
import type { Message } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { buildEnvelope, type EnvelopeContext } from '#inventory/envelope.js';
import { idempotencyKeyOfMessage } from '#inventory/idempotency-key.js';
import { type QueueRegistration, QueueRegistration as Registration } from '#inventory/model.js';
import { eventBusOfRule } from '#inventory/origin.js';

const DLQ = 'arn:aws:sqs:us-east-1:111122223333:orders-dlq';
const event = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../events/dlq/${name}.json`, import.meta.url), 'utf8')) as Message;

function envelopeOf(message: Message, origin?: QueueRegistration['origin']) {
  const ctx: EnvelopeContext = {
    dlqArn: DLQ,
    fifo: false,
    retentionPeriodSeconds: 1_209_600,
    now: 1767350400000,
    registration: origin ? { origin } : {},
  };
  return buildEnvelope(message, ctx).envelope;
}

describe('message origin and the failure reason the service attached', () => {
  it("reads an EventBridge target DLQ message's rule, target and error into its origin and failure", () => {
    const envelope = envelopeOf(event('eventbridge-target-dlq'));
    expect(envelope.origin).toEqual({
      kind: 'eventbridge',
      arn: 'arn:aws:events:us-east-1:111122223333:event-bus/orders-bus',
      via: 'rule-target-dlq',
      ruleArn: 'arn:aws:events:us-east-1:111122223333:rule/orders-bus/ship-orders',
      targetArn: 'arn:aws:lambda:us-east-1:111122223333:function:ship-order',
    });
    expect(envelope.failure).toMatchObject({
      errorClass: 'SDK_CLIENT_ERROR',
      errorMessage:
        'Unable to invoke Lambda function: Rate exceeded (Service: Lambda, Status Code: 429); retries exhausted: MaximumRetryAttempts',
    });
    expect(envelope.classification).toBe('transient');
    expect(envelope.keySource).toBe('eventContent');
  });

  it("gives a Lambda async-invocation DLQ message the function's error type and reason, and the registered function", () => {
    const functionArn = 'arn:aws:lambda:us-east-1:111122223333:function:ship-order';
    const envelope = envelopeOf(event('lambda-async-dlq'), { kind: 'lambda', functionArn });
    expect(envelope.origin).toEqual({ kind: 'lambda', arn: functionArn, via: 'async-dlq' });
    expect(envelope.failure.errorClass).toBe('InventoryTimeoutError');
    expect(envelope.failure.errorMessage).toContain('inventory service timed out after 3000 ms');
    expect(envelope.classification).toBe('transient');
  });

  it('leaves a Lambda DLQ message without a registered function with no arn, yet not classified poison', () => {
    const envelope = envelopeOf(event('lambda-async-dlq'));
    expect(envelope.origin).toEqual({ kind: 'lambda', arn: null, via: 'async-dlq' });
    expect(envelope.classification).not.toBe('poison');
  });

  it("reads a Lambda on-failure record's function, condition and response error", () => {
    const envelope = envelopeOf(event('lambda-on-failure-record'));
    expect(envelope.origin).toEqual({
      kind: 'lambda',
      arn: 'arn:aws:lambda:us-east-1:111122223333:function:ship-order',
      via: 'on-failure-destination',
    });
    expect(envelope.failure).toMatchObject({
      errorClass: 'CarrierUnavailableError',
      errorMessage: 'carrier API returned 503; condition RetriesExhausted',
    });
    expect(envelope.classification).toBe('transient');
  });

  it("C12 takes a non-raw SNS subscription DLQ message's topic from its body and SNS's error attributes", () => {
    const envelope = envelopeOf(event('sns-subscription-dlq-non-raw'));
    expect(envelope.origin).toEqual({
      kind: 'sns',
      arn: 'arn:aws:sns:us-east-1:111122223333:order-events',
      via: 'subscription-dlq',
    });
    expect(envelope.failure).toMatchObject({
      errorClass: 'AWS.SimpleQueueService.NonExistentQueue',
      errorMessage: 'The specified queue does not exist or you do not have access to it.',
    });
    expect([envelope.keySource, envelope.idempotencyKey]).toEqual([
      'snsMessageId',
      '9a1c7e55-0000-4000-8000-000000000401',
    ]);
  });

  it('C12 takes a raw SNS subscription DLQ message for SNS only when the registration says so', () => {
    const topicArn = 'arn:aws:sns:us-east-1:111122223333:order-events';
    const registered = envelopeOf(event('sns-subscription-dlq-raw'), { kind: 'sns', topicArn });
    expect(registered.origin).toEqual({ kind: 'sns', arn: topicArn, via: 'subscription-dlq' });
    expect(registered.failure.errorClass).toBe('ServiceUnavailable');
    expect(envelopeOf(event('sns-subscription-dlq-raw')).origin?.kind).toBe('lambda');
  });

  it('C07 gives a message with a DeadLetterQueueSourceArn its source queue, whatever the registration says', () => {
    const message: Message = {
      MessageId: 'm-1',
      Body: '{"orderId":"o-1"}',
      Attributes: { DeadLetterQueueSourceArn: 'arn:aws:sqs:us-east-1:111122223333:orders-queue' },
    };
    const envelope = envelopeOf(message, {
      kind: 'sns',
      topicArn: 'arn:aws:sns:us-east-1:111122223333:order-events',
    });
    expect(envelope.origin).toEqual({
      kind: 'sqs',
      arn: 'arn:aws:sqs:us-east-1:111122223333:orders-queue',
      via: 'redrive-policy',
    });
  });

  it('C07 still classifies a message sent straight to the DLQ without any evidence of origin as poison', () => {
    const envelope = envelopeOf({ MessageId: 'm-3', Body: 'not json at all' });
    expect([envelope.origin, envelope.classification]).toEqual([undefined, 'poison']);
  });

  it('keeps the idempotency key of a Lambda DLQ message that fails again with a new RequestID and reason', () => {
    const original = event('lambda-async-dlq');
    const again: Message = {
      ...original,
      MessageId: 'another',
      MessageAttributes: {
        ...original.MessageAttributes,
        RequestID: { DataType: 'String', StringValue: 'ffffffff-256b-11b8-8e3a-93690a4d8bcc' },
        ErrorMessage: { DataType: 'String', StringValue: 'Task timed out after 3.00 seconds' },
      },
    };
    expect(idempotencyKeyOfMessage(again).key).toBe(envelopeOf(original).idempotencyKey);
  });

  it('finds the event bus of default-bus and custom-bus rule ARNs', () => {
    expect(eventBusOfRule('arn:aws:events:eu-west-1:111122223333:rule/nightly')).toBe(
      'arn:aws:events:eu-west-1:111122223333:event-bus/default',
    );
    expect(eventBusOfRule('arn:aws:events:eu-west-1:111122223333:rule/orders-bus/ship')).toBe(
      'arn:aws:events:eu-west-1:111122223333:event-bus/orders-bus',
    );
    expect(eventBusOfRule('arn:aws:sqs:eu-west-1:111122223333:q')).toBeNull();
  });

  it('names the bad field of a registered origin and access role', () => {
    const result = Registration.safeParse({
      dlqArn: DLQ,
      origin: { kind: 'lambda', functionArn: 'arn:aws:sns:us-east-1:111122223333:t' },
      accessRoles: [{ accountId: '4444', roleArn: 'arn:aws:iam::444455556666:user/x' }],
    });
    expect(result.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      'origin.functionArn: must be a Lambda function ARN',
      'accessRoles.0.accountId: must be a 12-digit account id',
      'accessRoles.0.roleArn: must be an IAM role ARN',
    ]);
  });
});
