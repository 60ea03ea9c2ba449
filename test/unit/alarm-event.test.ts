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
