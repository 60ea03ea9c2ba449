import { describe, expect, it } from 'vitest';
import type { Notification } from '#incident/notifier.js';
import { notify } from '../../functions/notify/notify.js';

describe('Notify after a run with a resend', () => {
  it('tells the on-call person how many messages a retry sent again after a crash, in the text and the fields', async () => {
    const sent: Notification[] = [];
    const reconcile = {
      inventoried: 3,
      redriven: 3,
      parked: 0,
      discarded: 0,
      inDlq: 0,
      missing: 0,
      possibleDuplicateSends: 1,
    };
    const out = await notify(
      {
        outcome: 'completed',
        run: { plan: { incidentId: 'inc-r', dlqArn: 'arn:aws:sqs:us-east-1:1:d' }, reconcile },
      },
      {
        notifier: { notify: async (r) => void sent.push(r) },
        incidents: { updateIncident: async () => undefined } as never,
      },
    );
    expect(out.text).toBe(
      'Redrive of arn:aws:sqs:us-east-1:1:d complete: 3 redriven, 0 parked, 0 discarded, 0 still in the DLQ, 0 missing (1 resent after a crash: a consumer may see them twice).',
    );
    expect(sent[0]?.fields.possibleDuplicateSends).toBe(1);

    // A failed run reconciled after the failure: the copy was being sent, nothing has resent it yet.
    const failed = await notify(
      {
        outcome: 'failed',
        run: {
          plan: { incidentId: 'inc-r', dlqArn: 'arn:aws:sqs:us-east-1:1:d' },
          reconcile: { ...reconcile, redriven: 0, parked: 0, inDlq: 3 },
          error: { Error: 'Local.Crashed', Cause: 'crashed' },
        },
      },
      {
        notifier: { notify: async (r) => void sent.push(r) },
        incidents: { updateIncident: async () => undefined } as never,
      },
    );
    expect(failed.text).toBe(
      'Redrive of arn:aws:sqs:us-east-1:1:d failed at a step: Local.Crashed: crashed. 0 redriven, 0 parked, 0 discarded, 3 still in the DLQ, 0 missing (1 possibly sent by the step that failed, with no record that they were: a restart sends them again, so a consumer may see them twice).',
    );
  });

  it('says how many messages are missing, names them and says the counts are not balanced', async () => {
    const sent: Notification[] = [];
    const reconcile = {
      inventoried: 90,
      redriven: 85,
      parked: 0,
      discarded: 0,
      inDlq: 0,
      missing: 5,
      missingMessages: ['m1', 'm2', 'm3', 'm4', 'm5'].map((messageId) => ({
        messageId,
        idempotencyKey: 'k',
      })),
      possibleDuplicateSends: 0,
    };
    const out = await notify(
      {
        outcome: 'completed',
        run: { plan: { incidentId: 'inc-m', dlqArn: 'arn:aws:sqs:us-east-1:1:d' }, reconcile },
      },
      {
        notifier: { notify: async (r) => void sent.push(r) },
        incidents: { updateIncident: async () => undefined } as never,
      },
    );
    expect(out.text).toBe(
      'Redrive of arn:aws:sqs:us-east-1:1:d complete: 85 redriven, 0 parked, 0 discarded, 0 still in the DLQ, 5 missing (left the DLQ with no record: removed by hand or expired: m1, m2, m3, m4, m5; the counts are NOT balanced).',
    );
    expect(sent[0]?.fields).toMatchObject({ missing: 5, redriven: 85 });
  });

  it("says that returned copies are counted again, so a halted run's counts visibly add up to what was inventoried", async () => {
    // 240 inventoried, 120 of the 155 redriven came back: 240 + 120 returned = 155 + 20 + 185.
    const reconcile = {
      inventoried: 240,
      returned: 120,
      redriven: 155,
      parked: 20,
      discarded: 0,
      inDlq: 185,
      missing: 0,
    };
    const out = await notify(
      {
        outcome: 'halted',
        run: { plan: { incidentId: 'inc-h', dlqArn: 'arn:aws:sqs:us-east-1:1:d' }, reconcile },
      },
      {
        notifier: { notify: async () => undefined },
        incidents: { updateIncident: async () => undefined } as never,
      },
    );
    expect(out.text).toContain(
      '155 redriven, 20 parked, 0 discarded, 185 still in the DLQ, 0 missing (of 240 inventoried; 120 of the redriven came back and are counted again where they are now)',
    );
  });

  it('calls the named messages candidates when reconcile could not tell which ones left by hand (missingExact false)', async () => {
    const reconcile = {
      inventoried: 66,
      redriven: 61,
      parked: 0,
      discarded: 0,
      inDlq: 0,
      missing: 5,
      missingExact: false,
      missingMessages: [{ messageId: 'm-1' }, { messageId: 'm-2' }],
    };
    const out = await notify(
      {
        outcome: 'completed',
        run: { plan: { incidentId: 'inc-c', dlqArn: 'arn:aws:sqs:us-east-1:1:d' }, reconcile },
      },
      {
        notifier: { notify: async () => undefined },
        incidents: { updateIncident: async () => undefined } as never,
      },
    );
    expect(out.text).toContain(
      '5 missing (left the DLQ with no record: removed by hand or expired; which ones cannot be told apart from those the move task moved, candidates: m-1, m-2; the counts are NOT balanced)',
    );
  });
});
