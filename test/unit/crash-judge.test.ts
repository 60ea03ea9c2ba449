import { describe, expect, it } from 'vitest';
import { emptyReconcileResult, type ReconcileResult } from '../../functions/reconcile/reconcile.js';
import { judge, type Physical } from '../crash/crash-cell.js';

const report = (over: Partial<ReconcileResult>): ReconcileResult => ({
  ...emptyReconcileResult(),
  partial: false,
  balanced: true,
  ...over,
});
const physical = (over: Partial<Physical>): Physical => ({
  delivered: new Map(),
  parking: [],
  dlq: [],
  envelopeKeys: [],
  handDeleted: [],
  late: [],
  ...over,
});

describe("the crash cell's judge", () => {
  // a, b and poison p; the DLQ held b and p twice (dead-lettered twice before triage).
  const envelopeKeys = ['a', 'b', 'b', 'p', 'p'];
  const spec = { id: 'j' };

  it('takes two DLQ copies of one key delivered (or parked) twice as two messages, not a duplicate', () => {
    const problems = judge(
      spec,
      report({ inventoried: 5, redriven: 3, parked: 2 }),
      physical({
        envelopeKeys,
        delivered: new Map([
          ['a', 1],
          ['b', 2],
        ]),
        parking: ['p', 'p'],
      }),
      0,
    );
    expect(problems).toEqual([]);
  });

  it('names a key delivered more often than the DLQ held it, unless the report records it', () => {
    const seen = physical({
      envelopeKeys,
      delivered: new Map([
        ['a', 2],
        ['b', 2],
      ]),
      parking: ['p', 'p', 'p'],
    });
    expect(judge(spec, report({ inventoried: 5, redriven: 3, parked: 2 }), seen, 1)).toEqual([
      'unrecorded duplicate deliveries: a',
      'unrecorded duplicate copies in the parking queue: p',
    ]);
    const recorded = report({
      inventoried: 5,
      redriven: 3,
      parked: 2,
      possibleDuplicateSends: 2,
      possibleDuplicates: [
        { messageId: 'm-a', idempotencyKey: 'a', kind: 'redrive' },
        { messageId: 'm-p', idempotencyKey: 'p', kind: 'park' },
      ],
    });
    expect(judge(spec, recorded, seen, 2)).toEqual([]);
  });

  it('finds a report that counts more redriven than the consumer received', () => {
    const problems = judge(
      spec,
      report({ inventoried: 5, redriven: 3, parked: 2 }),
      physical({
        envelopeKeys,
        delivered: new Map([
          ['a', 1],
          ['b', 1],
        ]),
        parking: ['p', 'p'],
      }),
      0,
    );
    expect(problems).toEqual(['redriven 3 + moved unclassified 0, the consumer received 2 DLQ messages']);
  });
});
