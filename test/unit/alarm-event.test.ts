import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AlarmRecord } from '#inventory/model.js';
import { InvalidInputError } from '#platform/errors.js';
import { impliedQueueUrl, normaliseAlarmEvent } from '../../functions/triage/alarm-event.js';

const load = (path: string): unknown =>
  JSON.parse(readFileSync(new URL(`../../events/${path}`, import.meta.url), 'utf8'));

function record(path: string): AlarmRecord {
  const result = normaliseAlarmEvent(load(path));
  if (result.kind !== 'state-change') throw new Error(`expected a state change from ${path}`);
  return result.record;
}

describe('alarm event normalisation', () => {
  it('C01 the EventBridge event and the SNS notification normalise to the same record, region from the ARN', () => {
    const eb = record('cloudwatch/alarm-state-change.json');
    const sns = record('sns/alarm-notification.json');

    const { via: ebVia, reason: _r1, ...ebRest } = eb;
    const { via: snsVia, reason: _r2, ...snsRest } = sns;
    expect(ebRest).toEqual(snsRest);
    expect([ebVia, snsVia]).toEqual(['eventbridge', 'sns']);
    expect(sns).toMatchObject({
      alarmArn: 'arn:aws:cloudwatch:us-east-1:111122223333:alarm:orders-dlq-not-empty',
      account: '111122223333',
      region: 'us-east-1',
      queueNames: ['orders-dlq'],
      newState: 'ALARM',
      previousState: 'OK',
      stateTimestamp: '2026-01-02T10:35:00.000+0000',
      dedupeKey:
        'arn:aws:cloudwatch:us-east-1:111122223333:alarm:orders-dlq-not-empty@2026-01-02T10:35:00.000+0000',
    });
    expect(impliedQueueUrl(sns.region, sns.account, 'orders-dlq')).toBe(
      'https://sqs.us-east-1.amazonaws.com/111122223333/orders-dlq',
    );
  });

  it('C01 a configuration-change event is recognised as not a state change', () => {
    expect(normaliseAlarmEvent(load('cloudwatch/alarm-configuration-change.json'))).toEqual({
      kind: 'not-a-state-change',
      detailType: 'CloudWatch Alarm Configuration Change',
    });
  });

  it('C02 a metric-math alarm yields every QueueName among its metrics, in both shapes', () => {
    expect(record('sns/alarm-notification-metric-math.json').queueNames).toEqual([
      'orders-dlq',
      'payments-dlq',
    ]);
    expect(record('cloudwatch/alarm-state-change-metric-math.json').queueNames).toEqual([
      'orders-dlq',
      'payments-dlq',
    ]);
  });

  it('C02 a SEARCH-expression alarm yields no queue name and no "undefined"', () => {
    const search = record('sns/alarm-notification-search-expression.json');
    expect(search.queueNames).toEqual([]);
    expect(JSON.stringify(search)).not.toContain('undefined');
  });

  it('C04 OK and INSUFFICIENT_DATA transitions keep their states; INSUFFICIENT_DATA -> ALARM is an ALARM', () => {
    const states = [
      'cloudwatch/alarm-state-change-insufficient-data.json',
      'cloudwatch/alarm-state-change-ok-from-insufficient-data.json',
      'cloudwatch/alarm-state-change-alarm-from-insufficient-data.json',
      'cloudwatch/alarm-state-change-ok-from-alarm.json',
    ].map((path) => [record(path).previousState, record(path).newState]);
    expect(states).toEqual([
      ['OK', 'INSUFFICIENT_DATA'],
      ['INSUFFICIENT_DATA', 'OK'],
      ['INSUFFICIENT_DATA', 'ALARM'],
      ['ALARM', 'OK'],
    ]);
  });

  it('rejects an SNS message that is not JSON, naming the field', () => {
    const event = load('sns/alarm-notification.json') as { Records: Array<{ Sns: { Message: string } }> };
    (event.Records[0] as { Sns: { Message: string } }).Sns.Message = 'not json';
    expect(() => normaliseAlarmEvent(event)).toThrow(/Records\.0\.Sns\.Message: is not JSON/);
  });

  it('rejects an SNS alarm message without AlarmArn, naming the field', () => {
    const event = load('sns/alarm-notification.json') as { Records: Array<{ Sns: { Message: string } }> };
    const sns = (event.Records[0] as { Sns: { Message: string } }).Sns;
    const message = JSON.parse(sns.Message) as Record<string, unknown>;
    delete message.AlarmArn;
    sns.Message = JSON.stringify(message);
    const error = (() => {
      try {
        normaliseAlarmEvent(event);
      } catch (e) {
        return e as InvalidInputError;
      }
    })();
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error?.details[0]).toMatch(/^Records\.0\.Sns\.Message\.AlarmArn: /);
  });

  it('rejects an event of neither shape', () => {
    expect(() => normaliseAlarmEvent({ hello: 'world' })).toThrow(InvalidInputError);
  });

  it('C02 an SNS notification without Trigger (a composite alarm) has no queue names, like its EventBridge copy without metrics, instead of failing', () => {
    const event = load('sns/alarm-notification.json') as { Records: Array<{ Sns: { Message: string } }> };
    const sns = (event.Records[0] as { Sns: { Message: string } }).Sns;
    const message = JSON.parse(sns.Message) as Record<string, unknown>;
    delete message.Trigger;
    message.AlarmRule = 'ALARM(orders-dlq-not-empty) OR ALARM(payments-dlq-not-empty)';
    sns.Message = JSON.stringify(message);
    const eb = load('cloudwatch/alarm-state-change.json') as { detail: Record<string, unknown> };
    delete eb.detail.configuration;

    const viaSns = normaliseAlarmEvent(event);
    const viaEb = normaliseAlarmEvent(eb);

    expect(viaSns.kind === 'state-change' && viaSns.record.queueNames).toEqual([]);
    expect(viaEb.kind === 'state-change' && viaEb.record.queueNames).toEqual([]);
    expect(viaSns.kind === 'state-change' && viaSns.record.dedupeKey).toBe(
      viaEb.kind === 'state-change' ? viaEb.record.dedupeKey : 'eb',
    );
  });

  it('refuses junk of every kind with Redrive.InvalidInput naming where it is, never a TypeError', () => {
    const sns = load('sns/alarm-notification.json') as { Records: Array<{ Sns: Record<string, unknown> }> };
    const withMessage = (m: string) => ({
      Records: [{ ...sns.Records[0], Sns: { ...sns.Records[0]?.Sns, Message: m } }],
    });
    const cases: Array<[unknown, string]> = [
      [null, '(root)'],
      ['hello', '(root)'],
      [{ Records: null }, 'Records'],
      [{ Records: [sns.Records[0], sns.Records[0]] }, 'Records'],
      [withMessage('null'), 'Records.0.Sns.Message.(root)'],
      [withMessage('[]'), 'Records.0.Sns.Message.(root)'],
      [withMessage(' '), 'Records.0.Sns.Message'],
      [{ Records: [{ eventSource: 'aws:sqs', body: '{}' }] }, 'Records.0.EventSource'],
    ];
    for (const [event, field] of cases) {
      let error: unknown;
      try {
        normaliseAlarmEvent(event);
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(event)?.slice(0, 60)).toBeInstanceOf(InvalidInputError);
      expect(
        (error as InvalidInputError).details.some((d) => d.startsWith(`${field}:`)),
        field,
      ).toBe(true);
    }
  });
});

describe('composite alarm events', () => {
  const composite = () =>
    load('cloudwatch/composite-alarm-state-change.json') as { detail: { state: Record<string, unknown> } };
  const childrenOf = (event: unknown) => {
    const n = normaliseAlarmEvent(event);
    return n.kind === 'state-change' ? n.record.composite : undefined;
  };

  it('reads the triggering children and their states from EventBridge reasonData, not from the rule', () => {
    const info = childrenOf(composite());
    expect(info?.alarmRule).toMatch(/^ALARM\("orders-dlq-not-empty"\)/);
    expect(info?.triggeringChildren?.map((c) => [c.alarmArn.split(':alarm:')[1], c.state])).toEqual([
      ['orders-dlq-not-empty', 'ALARM'],
      ['checkout-cpu-high', 'ALARM'],
      ['payments-dlq-not-empty', 'OK'],
    ]);
    expect(info?.actionsSuppressedBy).toBeUndefined();
  });

  it('carries actionsSuppressedBy so triage can respect a suppressed composite', () => {
    const info = childrenOf(load('cloudwatch/composite-alarm-suppressed.json'));
    expect(info?.actionsSuppressedBy).toBe('WaitPeriod');
  });

  it('makes children unreadable (a named outcome, not a crash) when reasonData is missing, not JSON, or lists none', () => {
    const cases: Array<[unknown, string]> = [
      [undefined, 'the event has no detail.state.reasonData'],
      ['not json', 'detail.state.reasonData is not JSON'],
      ['{"version":"1.0"}', 'detail.state.reasonData has no triggeringAlarms list'],
      ['{"triggeringAlarms":[]}', 'detail.state.reasonData.triggeringAlarms is empty'],
    ];
    for (const [reasonData, reason] of cases) {
      const event = composite();
      if (reasonData === undefined) delete event.detail.state.reasonData;
      else event.detail.state.reasonData = reasonData;
      const info = childrenOf(event);
      expect(info?.triggeringChildren, reason).toBeNull();
      expect(info?.unreadableReason).toBe(reason);
    }
  });

  it('accepts SNS TriggeringChildren as objects or bare ARNs, and calls a missing list unreadable', () => {
    const sns = load('sns/composite-alarm-notification.json') as {
      Records: Array<{ Sns: { Message: string } }>;
    };
    const record = sns.Records[0] as { Sns: { Message: string } };
    const message = JSON.parse(record.Sns.Message) as Record<string, unknown>;
    message.TriggeringChildren = ['arn:aws:cloudwatch:us-east-1:111122223333:alarm:orders-dlq-not-empty'];
    record.Sns.Message = JSON.stringify(message);
    expect(childrenOf(sns)?.triggeringChildren).toEqual([
      {
        alarmArn: 'arn:aws:cloudwatch:us-east-1:111122223333:alarm:orders-dlq-not-empty',
        state: null,
        timestamp: null,
      },
    ]);
    delete message.TriggeringChildren;
    record.Sns.Message = JSON.stringify(message);
    expect(childrenOf(sns)?.unreadableReason).toBe('Records.0.Sns.Message.TriggeringChildren is missing');
  });

  it('refuses a child entry that is not an alarm ARN, or a TriggeringChildren that is not a list, naming the field', () => {
    const event = composite();
    event.detail.state.reasonData = JSON.stringify({ triggeringAlarms: [{ arn: 42 }] });
    expect(() => normaliseAlarmEvent(event)).toThrow(/detail\.state\.reasonData\.triggeringAlarms\.0\.arn/);
    const sns = load('sns/composite-alarm-notification.json') as {
      Records: Array<{ Sns: { Message: string } }>;
    };
    const record = sns.Records[0] as { Sns: { Message: string } };
    const message = JSON.parse(record.Sns.Message) as Record<string, unknown>;
    message.TriggeringChildren = 'orders-dlq-not-empty';
    record.Sns.Message = JSON.stringify(message);
    expect(() => normaliseAlarmEvent(sns)).toThrow(/Records\.0\.Sns\.Message\.TriggeringChildren/);
  });
});
