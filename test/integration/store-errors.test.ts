/**
 * Stores turn DynamoDB's ConditionalCheckFailedException into the pipeline's named errors at their
 * boundary, on DynamoDB Local: a missing record is Redrive.RecordNotFound, a record in another
 * state is Redrive.StateConflict naming the state it is in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApprovalStore } from '#approval/approval-store.js';
import { createIncidentStore } from '#incident/incident-store.js';
import { buildEnvelope } from '#inventory/envelope.js';
import { createEnvelopeStates } from '#inventory/envelope-states.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { RecordNotFoundError, StateConflictError } from '#platform/errors.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';

const DLQ = 'arn:aws:sqs:us-east-1:123456789012:store-errors-dlq';

describe('store errors on DynamoDB Local', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('setState of an envelope that does not exist is RecordNotFound, with or without an expected state', async () => {
    const envelopes = createEnvelopeStore();
    for (const opts of [{}, { expectedState: 'IN_DLQ' as const }]) {
      const error = await envelopes
        .setState(DLQ, 'm-missing', 'REDRIVEN', undefined, opts)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RecordNotFoundError);
      expect((error as RecordNotFoundError).name).toBe('Redrive.RecordNotFound');
      expect((error as Error).message).toBe(`no envelope m-missing in ${DLQ}`);
    }
  });

  it('setState guarded by a state the envelope has left is StateConflict naming its state, and writes nothing', async () => {
    const envelopes = createEnvelopeStore();
    const write = buildEnvelope(
      { MessageId: 'm-1', Body: 'hello', Attributes: { SentTimestamp: String(Date.now()) } },
      { dlqArn: DLQ, fifo: false, retentionPeriodSeconds: 345_600, now: Date.now(), registration: {} },
    );
    await envelopes.putEnvelopes([write], { deadlineMs: 10_000 });
    await envelopes.setState(DLQ, 'm-1', 'PARKED', 'poison', { expectedState: 'IN_DLQ' });

    const error = await envelopes
      .setState(DLQ, 'm-1', 'REDRIVEN', undefined, { expectedState: 'IN_DLQ' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateConflictError);
    expect((error as Error).message).toBe(`envelope m-1 in ${DLQ} is in state PARKED, not IN_DLQ`);
    expect((await envelopes.getEnvelope(DLQ, 'm-1'))?.state).toBe('PARKED');
  });

  it('setStates moves every envelope of the batch (reason set or removed), and a missing one is RecordNotFound naming it', async () => {
    const envelopes = createEnvelopeStore();
    const ids = Array.from({ length: 60 }, (_, i) => `m-batch-${i}`);
    await envelopes.putEnvelopes(
      ids.map((id) =>
        buildEnvelope(
          { MessageId: id, Body: id, Attributes: { SentTimestamp: String(Date.now()) } },
          { dlqArn: DLQ, fifo: false, retentionPeriodSeconds: 345_600, now: Date.now(), registration: {} },
        ),
      ),
      { deadlineMs: 10_000 },
    );
    await envelopes.setState(DLQ, 'm-batch-1', 'PARKED', 'poison');
    // 60 changes: three calls of 25, 25 and 10; the odd ones without a reason (the stored one removed).
    await createEnvelopeStates().setStates(
      DLQ,
      ids.map((id, i) => ({
        messageId: id,
        state: 'REDRIVEN',
        reason: i % 2 === 0 ? `moved ${i}` : undefined,
      })),
    );
    const stored = await envelopes.getEnvelopes(DLQ, ids);
    expect([...stored.values()].filter((e) => e.state === 'REDRIVEN')).toHaveLength(60);
    expect([stored.get('m-batch-0')?.stateReason, stored.get('m-batch-1')?.stateReason]).toEqual([
      'moved 0',
      undefined,
    ]);

    const error = await createEnvelopeStates()
      .setStates(DLQ, [
        { messageId: 'm-batch-2', state: 'IN_DLQ', reason: 'back in the DLQ' },
        { messageId: 'm-batch-missing', state: 'REDRIVEN' },
      ])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordNotFoundError);
    expect((error as Error).message).toBe(`no envelope m-batch-missing in ${DLQ}`);
    expect((await envelopes.getEnvelope(DLQ, 'm-batch-2'))?.state).toBe('IN_DLQ');
    expect(await envelopes.getEnvelope(DLQ, 'm-batch-missing')).toBeUndefined();
  });

  it('updating an incident or an approval that does not exist is RecordNotFound naming it', async () => {
    const incident = await createIncidentStore()
      .updateIncident('inc-missing', { status: 'CLOSED' })
      .catch((e: unknown) => e);
    expect(incident).toBeInstanceOf(RecordNotFoundError);
    expect((incident as Error).message).toBe('no incident inc-missing');

    const approval = await createApprovalStore()
      .setMessage('apr-missing', { channel: 'C0EXAMPLE', ts: '1767350100.000100' })
      .catch((e: unknown) => e);
    expect(approval).toBeInstanceOf(RecordNotFoundError);
    expect((approval as Error).message).toBe('no approval apr-missing');
  });
});
