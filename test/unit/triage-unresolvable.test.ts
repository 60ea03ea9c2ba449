/**
 * Triage of alarms that name no queue (SEARCH / expression alarms, C02): the ALARM_QUEUE_MAP
 * lookup uses only its own entries, and nothing reaches SQS or the table.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { normaliseAlarmEvent } from '../../functions/triage/alarm-event.js';
import { type TriageDeps, triage } from '../../functions/triage/triage.js';
import { createMemoryNotifier } from '../support/memory-notifier.js';

const searchEvent = (alarmName: string) =>
  normaliseAlarmEvent(
    JSON.parse(
      readFileSync(
        new URL('../../events/sns/alarm-notification-search-expression.json', import.meta.url),
        'utf8',
      ).replaceAll('any-dlq-search', alarmName),
    ),
  );

/** Ports that record any use: an unresolvable alarm must not touch them. */
function untouchable(
  calls: string[],
): Pick<TriageDeps, 'queues' | 'envelopes' | 'sessions' | 'incidents' | 'registry' | 'workflow'> {
  const trap = (name: string) =>
    new Proxy(
      {},
      {
        get: (_t, prop) => () => {
          calls.push(`${name}.${String(prop)}`);
          throw new Error(`${name}.${String(prop)} must not be called`);
        },
      },
    );
  return {
    queues: trap('queues'),
    envelopes: trap('envelopes'),
    sessions: trap('sessions'),
    incidents: trap('incidents'),
    registry: trap('registry'),
    workflow: trap('workflow'),
  } as never;
}

describe('triage of alarms without a QueueName', () => {
  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'C02 a SEARCH alarm named %s is unresolvable (ALARM_QUEUE_MAP own entries only), with a notification and no port call',
    async (alarmName) => {
      const calls: string[] = [];
      const notifier = createMemoryNotifier();
      const result = await triage(searchEvent(alarmName), {
        ...untouchable(calls),
        now: () => 1_767_350_400_000,
        remainingTimeMs: () => 60_000,
        config: {
          budgets: { messageBudget: 10, pageBudget: 10, safetyMarginMs: 0 },
          alarmQueueMap: JSON.parse('{"other-alarm": ["orders-dlq"]}'),
        },
        log: { info: () => undefined, warn: () => undefined },
        notifier,
      });
      expect([result.outcome, result.message]).toEqual([
        'unresolvable',
        'unresolvable alarm: no QueueName dimension',
      ]);
      expect(notifier.sent.map((n) => n.kind)).toEqual(['unresolvable-alarm']);
      expect(calls).toEqual([]);
    },
  );
});
