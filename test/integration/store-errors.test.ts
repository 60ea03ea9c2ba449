/**
 * Stores turn DynamoDB's ConditionalCheckFailedException into the pipeline's named errors at their
 * boundary, on DynamoDB Local: a missing record is Redrive.RecordNotFound, a record in another
 * state is Redrive.StateConflict naming the state it is in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApprovalStore } from '#approval/approval-store.js';
import { createIncidentStore } from '#incident/incident-store.js';
import { buildEnvelope } from '#inventory/envelope.js';
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
