import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIncidentStore } from '#incident/incident-store.js';
import {
  createAbandonedSessionFinder,
  createInventorySessionStore,
  type InventorySession,
  newInventorySession,
} from '#inventory/inventory-session.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';

// Issue 9: a triage that died mid-scan leaves its inventory session RUNNING, its messages held
// invisible. ValidateInput adopts such a session for a console start only when nobody runs it:
// the DLQ's inventory lease is free or expired.
describe('the abandoned inventory session of a DLQ (DynamoDB Local)', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const now = Date.UTC(2026, 11, 1, 12);
  const session = (dlqArn: string, inventoryId: string, startedAt: number): InventorySession => ({
    ...newInventorySession({
      dlq: { arn: dlqArn, url: 'http://localhost/q', visible: 12, inFlight: 0 },
      incidentId: inventoryId,
      leaseOwner: `alarm-${inventoryId}`,
      now: startedAt,
      holdUntil: startedAt + 140_000,
      holdLimit: 100,
    }),
  });

  it('finds the newest unfinished session once the inventory lease has expired, and none while it is live', async () => {
    const dlqArn = `arn:aws:sqs:${stack.region}:${stack.accountId}:abandoned-a`;
    const sessions = createInventorySessionStore();
    const finder = createAbandonedSessionFinder();
    await sessions.create({ ...session(dlqArn, 'inc-old', now - 600_000), status: 'COMPLETE' });
    await sessions.create(session(dlqArn, 'inc-dead', now - 60_000));
    await createIncidentStore().claimInventory(
      { dlqArn, owner: 'alarm-inc-dead', leaseExpiresAt: now + 10_000 },
      now - 60_000,
    );
    expect(await finder.find(dlqArn, now)).toBeUndefined();
    expect(await finder.find(dlqArn, now + 10_001)).toEqual({
      inventoryId: 'inc-dead',
      incidentId: 'inc-dead',
      status: 'RUNNING',
    });
  });

  it('finds nothing when every session of the DLQ is complete, even with no lease at all', async () => {
    const dlqArn = `arn:aws:sqs:${stack.region}:${stack.accountId}:abandoned-b`;
    await createInventorySessionStore().create({
      ...session(dlqArn, 'inc-done', now - 60_000),
      status: 'COMPLETE',
    });
    expect(await createAbandonedSessionFinder().find(dlqArn, now)).toBeUndefined();
  });
});
