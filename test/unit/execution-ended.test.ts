import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Incident } from '#incident/incident-store.js';
import type { LeaseHolder, WorkflowLease } from '#incident/workflow-lease.js';
import { InvalidInputError, RecordNotFoundError } from '#platform/errors.js';
import {
  type ExecutionEndedDeps,
  ExecutionStatusChangeEvent,
  executionEnded,
} from '../../functions/execution-ended/execution-ended.js';
import { createMemoryNotifier } from '../support/memory-notifier.js';

const sample = JSON.parse(
  readFileSync(
    new URL('../../events/stepfunctions/execution-status-change-aborted.json', import.meta.url),
    'utf8',
  ),
) as { detail: Record<string, unknown> };
const DLQ = 'arn:aws:sqs:us-east-1:111122223333:orders-dlq';
const NAME = 'inc-3f2a9c0d1e2f3a4b5c6d7e8f';

/** Plain fakes: a one-item lease table that records every release call, and an incident map. */
function fakes(lease: WorkflowLease | undefined, incidents: Record<string, Partial<Incident>> = {}) {
  const items = new Map<string, WorkflowLease>(lease ? [[lease.dlqArn, lease]] : []);
  const releases: Array<{ dlqArn: string; holder: LeaseHolder }> = [];
  const notifier = createMemoryNotifier();
  const deps: ExecutionEndedDeps = {
    notifier,
    incidents: {
      getIncident: async (id) => incidents[id] as Incident | undefined,
      updateIncident: async (id, patch) => {
        if (!incidents[id]) throw new RecordNotFoundError(`incident ${id}`);
        incidents[id] = { ...incidents[id], ...patch };
      },
    },
    leases: {
      get: async (dlqArn) => items.get(dlqArn),
      release: async (dlqArn, holder) => {
        releases.push({ dlqArn, holder });
        const held = items.get(dlqArn);
        if (held?.executionName !== holder.executionName || held.incidentId !== holder.incidentId)
          return false;
        items.delete(dlqArn);
        return true;
      },
    },
  };
  return { deps, items, releases, notifier };
}

const leaseOf = (executionName: string, incidentId = NAME): WorkflowLease => ({
  dlqArn: DLQ,
  incidentId,
  executionName,
  acquiredAt: '2026-11-30T04:00:00.000Z',
  expiresAt: 1_764_650_000,
});

const eventWith = (detail: Record<string, unknown>) =>
  ExecutionStatusChangeEvent.parse({ ...sample, detail: { ...sample.detail, ...detail } });

describe('executionEnded (core, plain fakes)', () => {
  it.each([
    ['FAILED', 'FAILED', 'failed'],
    ['TIMED_OUT', 'FAILED', 'failed'],
    ['ABORTED', 'STOPPED', 'cancelled'],
  ] as const)(
    'a run that ended %s before Notify recorded its end leaves the incident %s (no longer WORKFLOW_STARTED)',
    async (status, incidentStatus, outcome) => {
      const incidents: Record<string, Partial<Incident>> = {
        [NAME]: { incidentId: NAME, dlqArn: DLQ, status: 'WORKFLOW_STARTED' },
      };
      const { deps } = fakes(leaseOf(NAME), incidents);

      const result = await executionEnded(eventWith({ status }), deps);

      expect(result.incidentStatus).toBe(incidentStatus);
      expect(incidents[NAME]).toMatchObject({ status: incidentStatus, outcome, runEndedBy: NAME });
      expect(String((incidents[NAME] as { outcomeText?: unknown }).outcomeText)).toContain(`ended ${status}`);
    },
  );

  it('leaves the end Notify recorded for the same execution as it is (a Fail state after Notify)', async () => {
    const recorded = {
      incidentId: NAME,
      dlqArn: DLQ,
      status: 'STOPPED',
      outcome: 'sample-failed',
      runEndedBy: NAME,
    } as const;
    const incidents: Record<string, Partial<Incident>> = { [NAME]: { ...recorded } };
    const { deps } = fakes(undefined, incidents);

    const result = await executionEnded(eventWith({ status: 'FAILED' }), deps);

    expect(result.incidentStatus).toBeNull();
    expect(incidents[NAME]).toEqual(recorded);
  });

  it('releases the lease of the aborted execution named in the event, with that execution name, and notifies', async () => {
    const { deps, items, releases, notifier } = fakes(leaseOf(NAME));

    const result = await executionEnded(eventWith({}), deps);

    expect(releases).toEqual([{ dlqArn: DLQ, holder: { incidentId: NAME, executionName: NAME } }]);
    expect(items.has(DLQ)).toBe(false);
    expect(result).toMatchObject({ leaseReleased: true, dlqArn: DLQ, dlqFrom: 'input', notified: true });
    expect(notifier.sent).toHaveLength(1);
    expect(notifier.sent[0]).toMatchObject({ incidentId: NAME, kind: 'execution-ended' });
    expect(notifier.sent[0]?.text).toContain(
      `ended ABORTED before Notify; released its workflow lease on ${DLQ}`,
    );
  });

  it('deletes nothing when another execution holds the DLQ lease, and names that execution', async () => {
    const { deps, items, releases, notifier } = fakes(leaseOf('exec-other', 'inc-other'));

    const result = await executionEnded(eventWith({}), deps);

    expect(releases).toEqual([]);
    expect(items.get(DLQ)?.executionName).toBe('exec-other');
    expect(result).toMatchObject({ leaseReleased: false, heldBy: 'exec-other' });
    expect(notifier.sent[0]?.text).toContain('held by execution exec-other, left as is');
  });

  it('finds the DLQ through the incident named like the execution when the event carries no input', async () => {
    const { deps, items } = fakes(leaseOf(NAME), { [NAME]: { incidentId: NAME, dlqArn: DLQ } });

    const result = await executionEnded(eventWith({ input: null }), deps);

    expect(result).toMatchObject({ dlqFrom: 'incident', leaseReleased: true });
    expect(items.size).toBe(0);
  });

  it('releases nothing and says how to unblock by hand when neither the input nor an incident names the DLQ', async () => {
    const { deps, items, releases, notifier } = fakes(leaseOf(NAME));

    const result = await executionEnded(eventWith({ input: undefined }), deps);

    expect(result).toMatchObject({ dlqArn: null, dlqFrom: 'none', leaseReleased: false });
    expect(releases).toEqual([]);
    expect(items.size).toBe(1);
    expect(notifier.sent[0]?.text).toContain(`once its executionName is ${NAME}`);
  });

  it('only logs a FAILED run whose lease Notify/RecordFailure already released (no second notice)', async () => {
    const { deps, notifier } = fakes(undefined);

    const result = await executionEnded(eventWith({ status: 'FAILED' }), deps);

    expect(result).toMatchObject({ notified: false, leaseReleased: false, heldBy: null });
    expect(notifier.sent).toEqual([]);
  });

  it('rejects an input that is not a JSON object naming detail.input, before reading or deleting anything', async () => {
    const { deps, releases } = fakes(leaseOf(NAME));
    let reads = 0;
    deps.leases = {
      ...deps.leases,
      get: async () => {
        reads++;
        return undefined;
      },
    };

    const error = await executionEnded(eventWith({ input: 'not json' }), deps).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).details).toEqual([
      'detail.input: must be the execution input as a JSON object string, or null',
    ]);
    expect([reads, releases.length]).toEqual([0, 0]);
  });
});
