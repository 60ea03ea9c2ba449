/**
 * Composite alarms on the local stack: the real triage handler, SQS, DynamoDB Local and the
 * CloudWatch stand-in answering DescribeAlarms (docs/triage.md, "Composite alarms").
 */
import { readFileSync } from 'node:fs';
import {
  CloudWatchClient,
  PutCompositeAlarmCommand,
  PutMetricAlarmCommand,
  type PutMetricAlarmCommandInput,
  SetAlarmStateCommand,
} from '@aws-sdk/client-cloudwatch';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sqsClient } from '#platform/clients.js';
import { InvalidInputError } from '#platform/errors.js';
import { normaliseAlarmEvent } from '../../functions/triage/alarm-event.js';
import { createTriageHandler } from '../../functions/triage/handler.js';
import type { TriageResult } from '../../functions/triage/triage.js';
import type { WorkflowStarter } from '../../functions/triage/workflow-starter.js';
import { StandinError } from '../../local/aws-standins/server.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { createMemoryNotifier } from '../support/memory-notifier.js';
import { seedDlq } from '../support/seed-dlq.js';
import { scaled } from '../support/timeouts.js';

const ACCOUNT = '111122223333';
const load = (path: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../events/${path}`, import.meta.url), 'utf8'));
const arnOf = (name: string) => `arn:aws:cloudwatch:us-east-1:${ACCOUNT}:alarm:${name}`;

/** The EventBridge composite event with its reasonData children replaced (and a fresh timestamp). */
function compositeEvent(children: Array<[string, string]>, timestamp: string): Record<string, unknown> {
  const event = load('cloudwatch/composite-alarm-state-change.json') as {
    detail: { state: { reasonData: string; timestamp: string } };
  };
  event.detail.state.reasonData = JSON.stringify({
    triggeringAlarms: children.map(([name, value]) => ({ arn: arnOf(name), state: { value, timestamp } })),
  });
  event.detail.state.timestamp = timestamp;
  return event as unknown as Record<string, unknown>;
}

const sqsDepthAlarm = (name: string, queueName: string): PutMetricAlarmCommandInput => ({
  AlarmName: name,
  Namespace: 'AWS/SQS',
  MetricName: 'ApproximateNumberOfMessagesVisible',
  Dimensions: [{ Name: 'QueueName', Value: queueName }],
  Statistic: 'Maximum',
  Period: 60,
  EvaluationPeriods: 1,
  Threshold: 1,
  ComparisonOperator: 'GreaterThanOrEqualToThreshold',
});

describe('triage of composite alarms', () => {
  let stack: LocalStack;
  const starts: string[] = [];
  const workflow: WorkflowStarter = {
    async startWorkflow({ incidentId }) {
      starts.push(incidentId);
      return {
        executionArn: `arn:aws:states:us-east-1:${ACCOUNT}:execution:redrive:${incidentId}`,
        alreadyStarted: false,
      };
    },
  };
  const notifier = createMemoryNotifier();
  const handler = createTriageHandler({ overrides: { workflow, notifier } });
  const invoke = (event: unknown) =>
    handler(
      event,
      lambdaContext({ functionName: 'triage', timeoutMs: scaled(120_000), accountId: ACCOUNT }),
    ) as Promise<TriageResult>;
  const received: string[] = [];
  let orders: Awaited<ReturnType<typeof seedDlq>>;
  let payments: Awaited<ReturnType<typeof seedDlq>>;
  const cw = () => new CloudWatchClient({});
  const setState = (name: string, value: 'OK' | 'ALARM') =>
    cw().send(new SetAlarmStateCommand({ AlarmName: name, StateValue: value, StateReason: 'test' }));

  beforeAll(async () => {
    stack = await startLocalStack({ accountId: ACCOUNT });
    sqsClient().middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'ReceiveMessageCommand')
          received.push(String((args.input as { QueueUrl?: string }).QueueUrl));
        return next(args);
      },
      { step: 'initialize', name: 'recordReceives' },
    );
    orders = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'orders-dlq',
      sourceNames: ['orders-queue'],
      messages: [{ body: '{"orderId":"o-1"}' }, { body: '{"orderId":"o-2"}' }],
    });
    payments = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'payments-dlq',
      sourceNames: ['payments-queue'],
      messages: [{ body: '{"paymentId":"p-1"}' }],
    });
    await cw().send(new PutMetricAlarmCommand(sqsDepthAlarm('orders-dlq-not-empty', 'orders-dlq')));
    await cw().send(new PutMetricAlarmCommand(sqsDepthAlarm('payments-dlq-not-empty', 'payments-dlq')));
    // A backlog alarm on a source queue: an SQS depth alarm, but not on a DLQ.
    await cw().send(new PutMetricAlarmCommand(sqsDepthAlarm('orders-backlog', 'orders-queue')));
    await cw().send(
      new PutMetricAlarmCommand({
        ...sqsDepthAlarm('checkout-cpu-high', 'unused'),
        Namespace: 'AWS/EC2',
        MetricName: 'CPUUtilization',
        Dimensions: [{ Name: 'InstanceId', Value: 'i-0123456789abcdef0' }],
      }),
    );
    await cw().send(
      new PutCompositeAlarmCommand({
        AlarmName: 'checkout-dlqs',
        AlarmRule:
          'ALARM("orders-dlq-not-empty") OR ALARM("payments-dlq-not-empty") OR ALARM("checkout-cpu-high")',
      }),
    );
    await setState('orders-dlq-not-empty', 'ALARM');
    await setState('checkout-cpu-high', 'ALARM');
    await setState('orders-backlog', 'ALARM');
    await setState('payments-dlq-not-empty', 'OK');
  });
  afterAll(async () => {
    await stack?.stop();
  });
  beforeEach(() => {
    notifier.sent.splice(0);
    received.splice(0);
    starts.splice(0);
    stack.standins.cloudwatch.clearFaults();
  });

  it('inventories only the DLQ whose triggering child alarm is in ALARM and reports the CPU child, never guessing from the rule (EventBridge)', async () => {
    const result = await invoke(load('cloudwatch/composite-alarm-state-change.json'));

    expect(result.outcome).toBe('triaged');
    expect(result.queues.map((q) => [q.queueName, q.outcome])).toEqual([['orders-dlq', 'triaged']]);
    expect(new Set(received)).toEqual(new Set([orders.dlqUrl]));
    expect(received).not.toContain(payments.dlqUrl);
    const byName = Object.fromEntries((result.children ?? []).map((c) => [c.alarmName, c.outcome]));
    expect(byName).toEqual({
      'orders-dlq-not-empty': 'triaged',
      'checkout-cpu-high': 'not-a-dlq-alarm',
      'payments-dlq-not-empty': 'not-in-alarm',
    });
    const envelopes: string[] = [];
    for await (const e of createEnvelopeStore().listEnvelopes(orders.dlqArn)) envelopes.push(e.messageId);
    expect(envelopes).toHaveLength(2);
    let paymentsEnvelopes = 0;
    for await (const _ of createEnvelopeStore().listEnvelopes(payments.dlqArn)) paymentsEnvelopes++;
    expect(paymentsEnvelopes).toBe(0);
    expect(starts).toHaveLength(1);
    const skipped = notifier.sent.find((n) => n.kind === 'composite-children-skipped');
    expect(skipped?.text).toMatch(/checkout-cpu-high: not-a-dlq-alarm \(watches AWS\/EC2 CPUUtilization/);
    expect(skipped?.text).toMatch(/payments-dlq-not-empty: not-in-alarm/);
  });

  it('C01 C05 gives the SNS form of the same transition the same children and, being the same transition, is a duplicate', async () => {
    const viaSns = normaliseAlarmEvent(load('sns/composite-alarm-notification.json'));
    const viaEb = normaliseAlarmEvent(load('cloudwatch/composite-alarm-state-change.json'));
    expect(viaSns.kind === 'state-change' && viaSns.record.composite?.triggeringChildren).toEqual(
      viaEb.kind === 'state-change' && viaEb.record.composite?.triggeringChildren,
    );
    expect(viaSns.kind === 'state-change' && viaSns.record.composite?.triggeringChildren?.length).toBe(3);
    const result = await invoke(load('sns/composite-alarm-notification.json'));
    expect(result.outcome).toBe('duplicate');
    expect(received).toEqual([]);
  });

  it('reports a depth alarm on a queue that is no DLQ, and a child that went back to OK since, without inventorying either', async () => {
    await setState('payments-dlq-not-empty', 'OK');
    const result = await invoke(
      compositeEvent(
        [
          ['orders-backlog', 'ALARM'],
          ['payments-dlq-not-empty', 'ALARM'],
        ],
        '2026-01-02T11:00:00.000+0000',
      ),
    );
    expect(result.outcome).toBe('unresolvable');
    expect(result.message).toBe('composite alarm: no triggering child leads to a DLQ in ALARM');
    expect(
      Object.fromEntries((result.children ?? []).map((c) => [c.alarmName, [c.outcome, c.reason]])),
    ).toEqual({
      'orders-backlog': [
        'not-a-dlq',
        "orders-queue is no queue's dead-letter queue and is not registered: not inventoried",
      ],
      'payments-dlq-not-empty': ['not-in-alarm', 'is OK now'],
    });
    expect(received).toEqual([]);
    expect(notifier.sent.map((n) => n.kind)).toEqual(['unresolvable-alarm']);
  });

  it('follows a child composite alarm through its own triggering children', async () => {
    await cw().send(
      new PutCompositeAlarmCommand({
        AlarmName: 'payments-group',
        AlarmRule: 'ALARM("payments-dlq-not-empty")',
      }),
    );
    await setState('payments-dlq-not-empty', 'ALARM');
    await cw().send(
      new SetAlarmStateCommand({
        AlarmName: 'payments-group',
        StateValue: 'ALARM',
        StateReason: 'child',
        StateReasonData: JSON.stringify({
          triggeringAlarms: [
            { arn: arnOf('payments-dlq-not-empty'), state: { value: 'ALARM', timestamp: 't' } },
          ],
        }),
      }),
    );
    const result = await invoke(
      compositeEvent([['payments-group', 'ALARM']], '2026-01-02T11:05:00.000+0000'),
    );
    expect(result.queues.map((q) => [q.queueName, q.outcome])).toEqual([['payments-dlq', 'triaged']]);
    expect(result.children?.map((c) => [c.alarmName, c.depth, c.outcome])).toEqual([
      ['payments-dlq-not-empty', 2, 'triaged'],
    ]);
    expect(new Set(received)).toEqual(new Set([payments.dlqUrl]));
    await setState('payments-dlq-not-empty', 'OK');
  });

  it('respects suppressed actions: a composite suppressed by its wait period reads nothing and peeks nothing', async () => {
    const result = await invoke(load('cloudwatch/composite-alarm-suppressed.json'));
    expect(result.outcome).toBe('suppressed');
    expect(result.message).toMatch(/suppressed by WaitPeriod/);
    expect(received).toEqual([]);
    const before = stack.standins.cloudwatch.calls.length;
    await invoke(load('cloudwatch/composite-alarm-suppressed.json'));
    expect(stack.standins.cloudwatch.calls.length).toBe(before);
    expect(notifier.sent).toEqual([]);
  });

  it('names the outcome when the triggering children cannot be read (DescribeAlarms denied, reasonData not JSON) and peeks nothing', async () => {
    stack.standins.cloudwatch.fail({
      operation: 'DescribeAlarms',
      error: new StandinError(
        'AccessDenied',
        'User is not authorized to perform: cloudwatch:DescribeAlarms',
        403,
      ),
    });
    const denied = await invoke(
      compositeEvent([['orders-dlq-not-empty', 'ALARM']], '2026-01-02T11:10:00.000+0000'),
    );
    expect(denied.outcome).toBe('unresolvable');
    expect(denied.message).toMatch(
      /^unresolvable composite alarm: the child alarms cannot be read: access denied: cloudwatch:DescribeAlarms/,
    );

    const garbled = compositeEvent([], '2026-01-02T11:15:00.000+0000') as {
      detail: { state: { reasonData: string } };
    };
    garbled.detail.state.reasonData = '{"triggeringAlarms":';
    const unreadable = await invoke(garbled);
    expect(unreadable.message).toBe('unresolvable composite alarm: detail.state.reasonData is not JSON');
    expect(received).toEqual([]);
    expect(notifier.sent.map((n) => n.kind)).toEqual(['unresolvable-alarm', 'unresolvable-alarm']);
  });

  it('refuses a malformed composite event naming the field, with nothing read', async () => {
    const before = stack.standins.cloudwatch.calls.length;
    const event = compositeEvent([['orders-dlq-not-empty', 'ALARM']], '2026-01-02T11:20:00.000+0000') as {
      detail: { state: { reasonData: string } };
    };
    event.detail.state.reasonData = JSON.stringify({ triggeringAlarms: [{ arn: 'orders-dlq-not-empty' }] });
    const error = await invoke(event).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).details[0]).toMatch(
      /^detail\.state\.reasonData\.triggeringAlarms\.0\.arn: /,
    );
    const sns = load('sns/composite-alarm-notification.json') as {
      Records: Array<{ Sns: { Message: string } }>;
    };
    const message = JSON.parse(sns.Records[0]?.Sns.Message ?? '{}') as Record<string, unknown>;
    message.TriggeringChildren = [{ Arn: 'arn:aws:cloudwatch:eu-west-1:999999999999:alarm:elsewhere' }];
    (sns.Records[0] as { Sns: { Message: string } }).Sns.Message = JSON.stringify(message);
    const elsewhere = await invoke(sns).catch((e: unknown) => e);
    expect((elsewhere as InvalidInputError).details[0]).toMatch(
      /^Records\.0\.Sns\.Message\.TriggeringChildren\.0: child alarm .* is not in the composite alarm's Region/,
    );
    expect(stack.standins.cloudwatch.calls.length).toBe(before);
    expect(received).toEqual([]);
  });
});
