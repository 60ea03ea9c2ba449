import { describe, expect, it } from 'vitest';
import { QueueRegistration } from '#inventory/model.js';
import { formatIssues } from '#platform/middleware.js';

const DLQ = 'arn:aws:sqs:us-east-1:111122223333:orders-dlq';
const SOURCE = 'arn:aws:sqs:us-east-1:111122223333:orders';

/** The problems a registration is refused with (`<field>: <problem>`), or [] when it is accepted. */
function problems(fields: Record<string, unknown>): string[] {
  const result = QueueRegistration.safeParse({ dlqArn: DLQ, ...fields });
  return result.success ? [] : formatIssues(result.error);
}

describe('queue registrations that cannot work are refused, naming the field', () => {
  it('accepts a registration that can work, with its defaults', () => {
    const ok = QueueRegistration.parse({
      dlqArn: DLQ,
      owner: 'team-orders',
      slackChannel: 'C0123456789',
      approvers: ['U0123456789', 'W0ABCDEF12'],
      producerKey: { attribute: 'order-id' },
      rampRates: [5, 50, 500],
      parkingQueueArn: 'arn:aws:sqs:us-east-1:111122223333:orders-parking',
      sourceQueueArns: [SOURCE],
    });
    expect(ok).toMatchObject({ sampleSize: 5, dwellSeconds: 60, maxRedrives: 3, rampRates: [5, 50, 500] });
  });

  it.each([
    ['a descending ramp', { rampRates: [200, 50, 5] }, /^rampRates: must be strictly ascending/],
    ['a ramp with a repeated rate', { rampRates: [5, 5, 50] }, /^rampRates: must be strictly ascending/],
    [
      'a 50-step ramp',
      { rampRates: Array.from({ length: 50 }, (_, i) => i + 1) },
      /^rampRates: must have at most 10 steps/,
    ],
    ['a rate above 500 msg/s', { rampRates: [5, 600] }, /^rampRates\.1: /],
    [
      'a parking queue that is not an ARN',
      { parkingQueueArn: 'https://sqs.us-east-1.amazonaws.com/1/p' },
      /^parkingQueueArn: must be an SQS queue ARN/,
    ],
    [
      'the DLQ as its own parking queue',
      { parkingQueueArn: DLQ },
      /^parkingQueueArn: must not be the DLQ itself/,
    ],
    [
      'a source queue as parking queue',
      { parkingQueueArn: SOURCE, sourceQueueArns: [SOURCE] },
      /^parkingQueueArn: must not be a source queue/,
    ],
    [
      'a parking queue in another Region',
      { parkingQueueArn: 'arn:aws:sqs:eu-west-1:111122223333:p' },
      /^parkingQueueArn: must be in the DLQ's account and Region/,
    ],
    [
      'a parking queue in another account',
      { parkingQueueArn: 'arn:aws:sqs:us-east-1:999988887777:p' },
      /^parkingQueueArn: must be in the DLQ's account and Region/,
    ],
    [
      'a FIFO parking queue for a standard DLQ',
      { parkingQueueArn: 'arn:aws:sqs:us-east-1:111122223333:p.fifo' },
      /^parkingQueueArn: must be a standard queue like the DLQ/,
    ],
    [
      '10,000 approvers',
      { approvers: Array.from({ length: 10_000 }, (_, i) => `U${String(i).padStart(10, '0')}`) },
      /^approvers: must list at most 100 approvers/,
    ],
    [
      'an approver that is a name, not a Slack user id',
      { approvers: ['alice'] },
      /^approvers\.0: must be a Slack user id/,
    ],
    [
      'the same approver twice',
      { approvers: ['U0123456789', 'U0123456789'] },
      /^approvers\.1: U0123456789 is listed twice/,
    ],
    ['a 100,000-character owner', { owner: 'o'.repeat(100_000) }, /^owner: must be at most 256 characters/],
    [
      'control characters in the channel',
      { slackChannel: 'C0123\u0000456789' },
      /^slackChannel: must be a Slack channel id/,
    ],
    [
      'a channel name instead of its id',
      { slackChannel: '#orders-oncall' },
      /^slackChannel: must be a Slack channel id/,
    ],
    [
      'a bidirectional override in the owner',
      { owner: 'team\u202Eredro' },
      /^owner: must not contain control or invisible characters/,
    ],
    [
      'a bogus Region in the DLQ ARN',
      { dlqArn: 'arn:aws:sqs:moon-base:111122223333:orders-dlq' },
      /^dlqArn: must be an SQS queue ARN/,
    ],
    [
      'a producer attribute named like an AWS one',
      { producerKey: { attribute: 'AWS.TraceHeader' } },
      /^producerKey/,
    ],
  ])('refuses %s', (_, fields, first) => {
    const found = problems(fields);
    expect(found.length).toBeGreaterThan(0);
    expect(
      found.some((p) => first.test(p)),
      found.join('\n'),
    ).toBe(true);
  });

  it('lists every problem of a registration at once', () => {
    const found = problems({ rampRates: [50, 5], parkingQueueArn: DLQ, slackChannel: 'general' });
    expect(found.map((p) => p.split(':')[0]).sort()).toEqual([
      'parkingQueueArn',
      'rampRates',
      'slackChannel',
    ]);
  });
});
