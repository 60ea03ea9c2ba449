/**
 * Record shape versions on DynamoDB Local (docs/contracts.md "Record shape versions"): every item
 * the stores write carries `shapeVersion`; a record a newer release wrote is refused by name with
 * nothing misread; a record written before versions existed still reads as version 1.
 */
import { GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApprovalStore } from '#approval/approval-store.js';
import { createAuditTrail } from '#incident/audit-trail.js';
import { createCancelRequests } from '#incident/cancel-requests.js';
import { createIncidentStore, type Incident } from '#incident/incident-store.js';
import { createOpenIncidents } from '#incident/open-incident.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import { createWorkflowLeaseStore } from '#incident/workflow-lease.js';
import { buildEnvelope } from '#inventory/envelope.js';
import { createEnvelopeListing } from '#inventory/envelope-listing.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { createInventorySessionStore } from '#inventory/inventory-session.js';
import { emptySummary } from '#inventory/summary.js';
import { documentClient } from '#platform/clients.js';
import { UnknownShapeVersionError } from '#platform/errors.js';
import { SHAPE_VERSIONS } from '#platform/record-shapes.js';
import { keys } from '#platform/table.js';
import { createMoveTaskRecords } from '#transfer/move-task-record.js';
import { createRedriveLedger } from '#transfer/redrive-ledger.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { pendingApprovalRecord } from '../support/approval-record.js';

const DLQ = 'arn:aws:sqs:us-east-1:123456789012:shapes-dlq';
const now = Date.now();

function envelopeWrite(messageId: string, body: string) {
  return buildEnvelope(
    { MessageId: messageId, Body: body, Attributes: { SentTimestamp: String(now) } },
    { dlqArn: DLQ, fifo: false, retentionPeriodSeconds: 345_600, now, registration: {} },
  );
}

async function putRaw(item: Record<string, unknown>): Promise<void> {
  await documentClient().send(new PutCommand({ TableName: stack.tableName, Item: item }));
}

let stack: LocalStack;

describe('record shape versions on DynamoDB Local', () => {
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('every item the stores write carries the current shapeVersion of its kind', async () => {
    const envelopes = createEnvelopeStore();
    const incidents = createIncidentStore();
    await envelopes.putEnvelopes(
      [envelopeWrite('m-small', 'hello'), envelopeWrite('m-large', 'x'.repeat(400_000))],
      {
        deadlineMs: 20_000,
      },
    );
    await envelopes.putCursor({
      dlqArn: DLQ,
      incidentId: 'inc-1',
      dedupeKey: 'alarm@1',
      runs: 1,
      inventoried: 2,
      reason: 'message budget',
      updatedAt: new Date(now).toISOString(),
    });
    await createQueueRegistry().putRegistration({ dlqArn: DLQ });
    await createWorkflowLeaseStore().acquire(DLQ, { incidentId: 'inc-1', executionName: 'inc-1' }, now, 3600);
    await createRedriveLedger().begin(
      {
        key: 'key-1',
        incidentId: 'inc-1',
        redriveId: 'inc-1',
        kind: 'redrive',
        dlqArn: DLQ,
        dlqMessageId: 'm-small',
        destinationUrl: 'http://127.0.0.1/000000000000/orders',
        visibleAfter: 0,
      },
      now,
    );
    await incidents.putIncident({
      incidentId: 'inc-1',
      dlqArn: DLQ,
      status: 'OPEN',
      createdAt: new Date(now).toISOString(),
      updatedAt: new Date(now).toISOString(),
    } as unknown as Incident);
    await incidents.claimTransition(
      { dedupeKey: 'alarm@1', alarmArn: 'alarm', leaseExpiresAt: now + 60_000 },
      now,
    );
    await incidents.claimInventory({ dlqArn: DLQ, owner: 'alarm@1', leaseExpiresAt: now + 60_000 }, now);
    await incidents.putLatestAlarmIncidents({
      alarmArn: 'alarm',
      dedupeKey: 'alarm@1',
      stateTimestamp: new Date(now).toISOString(),
      incidentIds: ['inc-1'],
      updatedAt: new Date(now).toISOString(),
    });
    const approvals = createApprovalStore();
    await approvals.create(
      pendingApprovalRecord({
        approvalId: 'apr-1',
        taskToken: 'token-1',
        incidentId: 'inc-1',
        dlqArn: DLQ,
        channel: 'C0EXAMPLE',
        messageTs: null,
        approvers: [],
        createdAt: now,
        expiresAt: Math.floor(now / 1000) + 3600,
      }),
    );
    await approvals.putThread(
      'inc-1',
      { channel: 'C0EXAMPLE', ts: '1767350100.000100' },
      Math.floor(now / 1000) + 3600,
    );
    await createAuditTrail().record({
      incidentId: 'inc-1',
      entryId: 'approval#apr-1',
      kind: 'approved',
      at: now,
      by: 'alice',
      via: 'slack',
    });

    await createMoveTaskRecords().recordIntent({
      dlqArn: DLQ,
      incidentId: 'inc-1',
      executionName: 'inc-1',
      seq: 1,
      rate: 5,
      rateIndex: 0,
      destinationArn: null,
      requestedAt: now,
    });
    await createOpenIncidents().open(DLQ, 'inc-1', now);
    await createCancelRequests().request({
      incidentId: 'inc-1',
      executionName: 'inc-1',
      by: 'alice',
      via: 'cli',
      at: now,
      reason: null,
    });

    const sessions = createInventorySessionStore();
    await sessions.create({
      dlqArn: DLQ,
      dlqUrl: 'http://127.0.0.1/000000000000/shapes-dlq',
      inventoryId: 'inc-1',
      incidentId: 'inc-1',
      leaseOwner: 'alarm@1',
      status: 'RUNNING',
      startedAt: now,
      holdUntil: now + 60_000,
      depthAtStart: 2,
      inventoried: 2,
      created: 2,
      held: 2,
      holdPages: 1,
      releasedPages: 0,
      invocations: 1,
      activeMs: 10,
      extensions: 0,
      stopReason: null,
      holdLimit: 110_000,
      sampled: false,
      releaseFailures: 0,
      summary: emptySummary(),
      warnings: [],
      version: 0,
      updatedAt: new Date(now).toISOString(),
    });
    await sessions.putHoldPage(DLQ, 'inc-1', 0, ['handle-1', 'handle-2']);
    const session = await sessions.get(DLQ, 'inc-1');
    expect(session?.held).toBe(2);
    expect('shapeVersion' in (session ?? {})).toBe(false);
    const pages = [];
    for await (const page of sessions.holdPages(DLQ, 'inc-1', 0)) pages.push(page);
    expect(pages).toEqual([{ seq: 0, handles: ['handle-1', 'handle-2'] }]);

    const out = await documentClient().send(new ScanCommand({ TableName: stack.tableName }));
    const items = out.Items ?? [];
    const family = (i: Record<string, unknown>) =>
      `${String(i.pk).split('#')[0]} / ${String(i.sk).replace(/#.*/, '#')}`;
    expect(new Set(items.map(family))).toEqual(
      new Set([
        'DLQ / MSG#',
        'DLQ / CURSOR',
        'DLQ / CONFIG',
        'DLQ / WORKFLOW',
        'DLQ / INVENTORY',
        'DLQ / INVENTORY#',
        'DLQ / HOLD#',
        'DLQ / MOVETASK',
        'DLQ / LEDGER#',
        'DLQ / OPEN_INCIDENT',
        'INCIDENT / INCIDENT',
        'INCIDENT / SLACK#',
        'INCIDENT / AUDIT#',
        'INCIDENT / CANCEL#',
        'ALARM / TRANSITION',
        'ALARM / LATEST',
        'APPROVAL / APPROVAL',
      ]),
    );
    expect(items.filter((i) => String(i.sk).includes('#CHUNK#')).length).toBe(2);
    // Every kind is at version 1 but the ledger entry (2: it moved to one entry per DLQ message;
    // 3, un-park's envelopeMessageId, only on entries that carry it, none here).
    const current = (i: Record<string, unknown>) => (family(i) === 'DLQ / LEDGER#' ? 2 : 1);
    expect(items.filter((i) => i.shapeVersion !== current(i)).map(family)).toEqual([]);
    expect(Object.entries(SHAPE_VERSIONS).filter(([, v]) => v !== 1)).toEqual([['ledger-entry', 3]]);
  });

  it('a record a newer release wrote is refused by name, naming the record and the versions known', async () => {
    const envelopes = createEnvelopeStore();
    const stored = await envelopes.getEnvelope(DLQ, 'm-small');
    await putRaw({
      ...stored,
      inlineBody: undefined,
      pk: keys.dlq(DLQ),
      sk: keys.message('m-v2'),
      entity: 'envelope',
      messageId: 'm-v2',
      shapeVersion: 2,
      body: { renamed: 'a field a v1 reader would misread' },
    });
    const error = await envelopes.getEnvelope(DLQ, 'm-v2').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnknownShapeVersionError);
    expect((error as Error).name).toBe('Redrive.UnknownShapeVersion');
    expect((error as Error).message).toBe(
      `envelope m-v2 in ${DLQ} has shapeVersion 2; this release reads envelope versions 1..1 (a newer release wrote it: deploy that release to every function)`,
    );
    const listing = (async () => {
      for await (const _ of envelopes.listEnvelopes(DLQ));
    })();
    await expect(listing).rejects.toBeInstanceOf(UnknownShapeVersionError);
    // The projected listing (Preflight, Park, Reconcile) reads the version too, whatever fields it asks for.
    const projected = (async () => {
      for await (const _ of createEnvelopeListing().listEnvelopes(DLQ, ['state']));
    })();
    await expect(projected).rejects.toThrow(`envelope m-v2 in ${DLQ} has shapeVersion 2`);

    await putRaw({
      pk: keys.dlq(DLQ),
      sk: keys.ledger('m-v2'),
      key: 'key-v2',
      dlqArn: DLQ,
      dlqMessageId: 'm-v2',
      shapeVersion: '2',
    });
    await expect(createRedriveLedger().get(DLQ, 'm-v2')).rejects.toThrow(
      `ledger entry m-v2 in ${DLQ} has shapeVersion "2"; this release reads ledger-entry versions 1..3`,
    );
    const otherDlq = `${DLQ}-v2`;
    await putRaw({ pk: keys.dlq(otherDlq), sk: keys.config, dlqArn: otherDlq, shapeVersion: 3 });
    await expect(createQueueRegistry().getRegistration(otherDlq)).rejects.toBeInstanceOf(
      UnknownShapeVersionError,
    );
  });

  it('records written before shape versions existed (no shapeVersion) still read, as version 1', async () => {
    const envelopes = createEnvelopeStore();
    const raw = await documentClient().send(
      new GetCommand({ TableName: stack.tableName, Key: { pk: keys.dlq(DLQ), sk: keys.message('m-small') } }),
    );
    expect(raw.Item?.shapeVersion).toBe(1);
    const { shapeVersion: _v, ...item } = raw.Item ?? {};
    await putRaw({ ...item, sk: keys.message('m-old'), messageId: 'm-old' });
    const old = await envelopes.getEnvelope(DLQ, 'm-old');
    expect(old?.messageId).toBe('m-old');
    expect(old?.bodySha256).toBe((await envelopes.getEnvelope(DLQ, 'm-small'))?.bodySha256);
    expect(old).not.toHaveProperty('shapeVersion');
    expect(new TextDecoder().decode(await envelopes.readBody(old as NonNullable<typeof old>))).toBe('hello');

    await putRaw({
      pk: keys.incident('inc-old'),
      sk: keys.incidentSk,
      incidentId: 'inc-old',
      dlqArn: DLQ,
      status: 'CLOSED',
    });
    expect(await createIncidentStore().getIncident('inc-old')).toEqual({
      incidentId: 'inc-old',
      dlqArn: DLQ,
      status: 'CLOSED',
    });
  });
});
