import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { documentClient, sqsClient } from '#platform/clients.js';
import { LEDGER_ENTRY_WITHOUT_ENVELOPE_ID, SHAPE_VERSIONS } from '#platform/record-shapes.js';
import { keys } from '#platform/table.js';
import { setTransferFaultHook, type TransferStep } from '#transfer/message-transfer.js';
import { createRedriveLedger, envelopeIdOf, type LedgerRequest } from '#transfer/redrive-ledger.js';
import { handler as reconcileHandler } from '../../functions/reconcile/handler.js';
import type { ReconcileResult } from '../../functions/reconcile/reconcile.js';
import { handler as sampleHandler } from '../../functions/sample-redrive/handler.js';
import type { SampleRedriveResult } from '../../functions/sample-redrive/sample-redrive.js';
import { drain, lambdaContext, ledgerEntry, planFor, seedAndInventory } from '../support/redrive-fixtures.js';
import { scaled } from '../support/timeouts.js';
import { useTransferStack } from '../support/transfer-stack.js';

const DLQ_ARN = 'arn:aws:sqs:us-east-1:123456789012:ownership-dlq';
const request = (redriveId: string, visibleAfter: number): LedgerRequest => ({
  key: 'order-1',
  dlqArn: DLQ_ARN,
  dlqMessageId: 'm-1',
  incidentId: 'inc-own',
  redriveId,
  kind: 'redrive',
  destinationUrl: 'http://sqs.local/123456789012/orders',
  visibleAfter,
});

const sample = (event: unknown) =>
  sampleHandler(event as never, lambdaContext) as Promise<SampleRedriveResult>;
const reconcile = (event: unknown) =>
  reconcileHandler(event as never, lambdaContext) as Promise<ReconcileResult>;

function crashOnceAt(step: TransferStep): { key: () => string | undefined } {
  let crashed: string | undefined;
  setTransferFaultHook((at, key) => {
    if (at === step && crashed === undefined) {
      crashed = key;
      throw new Error(`simulated crash ${step}`);
    }
  });
  return { key: () => crashed };
}

describe('redrive ledger ownership across runs (DynamoDB Local)', () => {
  useTransferStack();

  it('reads a version-1 entry (KEY#<key> / REDRIVE, before the ledger moved per DLQ message): a run in flight across the upgrade is resumed, never sent twice', async () => {
    const ledger = createRedriveLedger();
    const now = Date.now();
    const legacy = (dlqMessageId: string, status: 'SENT' | 'IN_PROGRESS', key: string) =>
      documentClient().send(
        new PutCommand({
          TableName: process.env.TABLE_NAME,
          Item: {
            pk: keys.idempotencyKey(key),
            sk: 'REDRIVE',
            entity: 'redrive-ledger',
            shapeVersion: 1,
            key,
            redriveId: 'run-old',
            kind: 'redrive',
            status,
            dlqArn: DLQ_ARN,
            dlqMessageId,
            destinationUrl: 'http://sqs.local/123456789012/orders',
            sentMessageId: status === 'SENT' ? 'sent-old' : null,
            dlqDeleted: false,
            duplicatePrevented: false,
            visibleAfter: now + 60_000,
            resent: false,
            updatedAt: new Date(now).toISOString(),
          },
        }),
      );
    await legacy('m-legacy-sent', 'SENT', 'order-legacy-1');
    await legacy('m-legacy-busy', 'IN_PROGRESS', 'order-legacy-2');

    // The same run, retried after the upgrade: its send happened, only the DLQ delete is left.
    const resumed = await ledger.begin(
      { ...request('run-old', now + 30_000), key: 'order-legacy-1', dlqMessageId: 'm-legacy-sent' },
      now,
    );
    expect(resumed).toMatchObject({
      outcome: 'already-sent',
      entry: { redriveId: 'run-old', sentMessageId: 'sent-old' },
    });
    // Another run while the old owner's lease runs: busy, not a second send.
    const other = await ledger.begin(
      { ...request('run-new', now + 30_000), key: 'order-legacy-2', dlqMessageId: 'm-legacy-busy' },
      now,
    );
    expect(other).toMatchObject({ outcome: 'busy', entry: { redriveId: 'run-old', status: 'IN_PROGRESS' } });
    // Carried to the new key, current version, with the request's incident.
    expect(await ledger.get(DLQ_ARN, 'm-legacy-busy')).toMatchObject({
      incidentId: 'inc-own',
      takenOverFrom: [],
    });
    const stored = await documentClient().send(
      new GetCommand({
        TableName: process.env.TABLE_NAME,
        Key: { pk: keys.dlq(DLQ_ARN), sk: keys.ledger('m-legacy-sent') },
      }),
    );
    expect(stored.Item?.shapeVersion).toBe(LEDGER_ENTRY_WITHOUT_ENVELOPE_ID);
    // A version-1 entry of another DLQ message under the same key is not this message's.
    const unrelated = await ledger.begin(
      { ...request('run-new', now + 30_000), key: 'order-legacy-1', dlqMessageId: 'm-other' },
      now,
    );
    expect(unrelated.outcome).toBe('new');
  });

  it('writes an un-park entry (envelopeMessageId) at version 3, which a version-2 reader refuses instead of settling the envelope as PARKED, and every other entry at version 2', async () => {
    const ledger = createRedriveLedger();
    const now = Date.now();
    const stored = async (dlqMessageId: string) =>
      (
        await documentClient().send(
          new GetCommand({
            TableName: process.env.TABLE_NAME,
            Key: { pk: keys.dlq(DLQ_ARN), sk: keys.ledger(dlqMessageId) },
          }),
        )
      ).Item;
    await ledger.begin({ ...request('run-p', now), dlqMessageId: 'm-plain', key: 'order-plain' }, now);
    await ledger.begin(
      {
        ...request('run-u', now),
        dlqMessageId: 'parked-copy-1',
        envelopeMessageId: 'm-parked',
        key: 'order-parked',
      },
      now,
    );
    expect((await stored('m-plain'))?.shapeVersion).toBe(2);
    const unpark = await stored('parked-copy-1');
    expect(unpark?.shapeVersion).toBe(3);
    // A release that reads 1..2 refuses it by version (readShape's rule).
    expect(Number(unpark?.shapeVersion)).toBeGreaterThan(LEDGER_ENTRY_WITHOUT_ENVELOPE_ID);
    expect(SHAPE_VERSIONS['ledger-entry']).toBe(3);
    const read = await ledger.get(DLQ_ARN, 'parked-copy-1');
    expect(read && envelopeIdOf(read)).toBe('m-parked');
    // A version-2 entry (no envelopeMessageId) settles its own DLQ message.
    const plain = await ledger.get(DLQ_ARN, 'm-plain');
    expect(plain && envelopeIdOf(plain)).toBe('m-plain');
  });

  it('never overwrites another run s SENT entry: busy while its lease runs, then taken over as already sent, with the earlier owner kept', async () => {
    const ledger = createRedriveLedger();
    const now = Date.now();
    await ledger.begin(request('run-a', now + 30_000), now);
    await ledger.markSent(DLQ_ARN, 'm-1', 'run-a', 'sent-1');

    const early = await ledger.begin(request('run-b', now + 60_000), now + 1_000);
    expect(early).toMatchObject({ outcome: 'busy', entry: { redriveId: 'run-a', status: 'SENT' } });
    expect(await ledger.get(DLQ_ARN, 'm-1')).toMatchObject({ redriveId: 'run-a', sentMessageId: 'sent-1' });

    const late = await ledger.begin(
      { ...request('run-b', now + 90_000), kind: 'park', destinationUrl: 'http://other' },
      now + 31_000,
    );
    expect(late).toMatchObject({ outcome: 'already-sent', takenOver: true });
    expect(await ledger.get(DLQ_ARN, 'm-1')).toMatchObject({
      redriveId: 'run-b',
      takenOverFrom: ['run-a'],
      kind: 'redrive',
      destinationUrl: 'http://sqs.local/123456789012/orders',
      sentMessageId: 'sent-1',
      status: 'SENT',
      resent: false,
    });
  });

  it('takes another run s IN_PROGRESS entry over only after its lease and records it as a possible duplicate', async () => {
    const ledger = createRedriveLedger();
    const now = Date.now();
    const req = { ...request('run-a', now + 5_000), dlqMessageId: 'm-2' };
    await ledger.begin(req, now);
    const taken = await ledger.begin({ ...req, redriveId: 'run-c', visibleAfter: now + 40_000 }, now + 6_000);
    expect(taken).toMatchObject({ outcome: 'resume', takenOver: true, entry: { resent: true } });
    // The same run asking again resumes its own entry; the earlier owner's markSent changes nothing.
    await ledger.markSent(DLQ_ARN, 'm-2', 'run-a', 'stale').catch(() => undefined);
    expect(await ledger.get(DLQ_ARN, 'm-2')).toMatchObject({
      redriveId: 'run-c',
      status: 'IN_PROGRESS',
      resent: true,
      takenOverFrom: ['run-a'],
    });
  });

  it('lists a DLQ s entries with a consistent Query of the base table, never an index', async () => {
    const seen: Array<{ name: string; input: Record<string, unknown> }> = [];
    const client = documentClient();
    client.middlewareStack.add(
      (next, context) => async (args) => {
        seen.push({
          name: String(context.commandName),
          input: (args as { input: Record<string, unknown> }).input,
        });
        return next(args);
      },
      { step: 'initialize', name: 'recordLedgerReads' },
    );
    try {
      const ledger = createRedriveLedger({ client });
      const now = Date.now();
      await ledger.begin({ ...request('run-d', now), dlqMessageId: 'm-3' }, now);
      const listed = await ledger.list(DLQ_ARN);
      expect(listed.map((e) => e.dlqMessageId)).toContain('m-3');
    } finally {
      client.middlewareStack.remove('recordLedgerReads');
    }
    const queries = seen.filter((c) => c.name === 'QueryCommand');
    expect(queries).toHaveLength(1);
    expect(queries[0]?.input).toMatchObject({ ConsistentRead: true });
    expect(queries[0]?.input.IndexName).toBeUndefined();
    const reads = seen.filter((c) => c.name === 'GetCommand');
    expect(reads.every((c) => c.input.ConsistentRead === true)).toBe(true);
  });

  it('a console restart (another run of the incident) finishes a sample the crashed run sent but did not delete, without sending it again', {
    timeout: scaled(60_000),
  }, async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'restart-sent-dlq',
      sourceNames: ['restart-sent-src'],
      messages: Array.from({ length: 4 }, (_, i) => ({ body: `{"orderId":"s-${i}"}` })),
      incidentId: 'inc-restart-sent',
    });
    const preflight = { verifyWindowSeconds: 0, fifo: false };
    const crash = crashOnceAt('after-send');
    const first = planFor(dlq, { sampleSize: 2, runId: 'exec-1', mode: 'sample-only' });
    await expect(sample({ plan: first, preflight })).rejects.toThrow('simulated crash');
    setTransferFaultHook(undefined);

    const restart = planFor(dlq, { sampleSize: 2, runId: 'exec-2', mode: 'sample-only' });
    const second = await sample({ plan: restart, preflight });
    expect(second.keys).toContain(crash.key());
    expect(second.duplicateSendsPrevented).toBe(1);
    expect(await ledgerEntry(dlq.dlqArn, crash.key() as string)).toMatchObject({
      redriveId: 'exec-2',
      takenOverFrom: ['exec-1'],
      dlqDeleted: true,
      resent: false,
    });
    const delivered = await drain(sqsClient(), dlq.sources[0]?.url as string);
    const copies = delivered.filter(
      (m) => m.MessageAttributes?.['idempotency-key']?.StringValue === crash.key(),
    );
    expect(copies).toHaveLength(1);

    const report = await reconcile({ plan: restart, outcome: 'sample-only' });
    expect(report).toMatchObject({
      inventoried: 4,
      redriven: 2,
      inDlq: 2,
      missing: 0,
      takenOver: 1,
      duplicateSendsPrevented: 1,
      possibleDuplicateSends: 0,
      balanced: true,
    });
  });

  it('a console restart resends a sample the crashed run recorded but may not have sent, and the report names it as a possible duplicate', {
    timeout: scaled(60_000),
  }, async () => {
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: 'restart-record-dlq',
      sourceNames: ['restart-record-src'],
      messages: [{ body: '{"orderId":"r-1"}' }, { body: '{"orderId":"r-2"}' }],
      incidentId: 'inc-restart-record',
    });
    const preflight = { verifyWindowSeconds: 0, fifo: false };
    // The crash comes after SendMessage and before the ledger says SENT: the first copy is out.
    const ledger = createRedriveLedger();
    const dying = {
      ...ledger,
      markSent: async () => Promise.reject(new Error('simulated crash after send')),
    };
    const { sampleRedrive } = await import('../../functions/sample-redrive/sample-redrive.js');
    const { createTransferDeps } = await import('#transfer/transfer-deps.js');
    const { pipelineConfig } = await import('#platform/config.js');
    await expect(
      sampleRedrive(
        { plan: planFor(dlq, { sampleSize: 1, runId: 'exec-1', mode: 'sample-only' }), preflight },
        { ...createTransferDeps(pipelineConfig()), ledger: dying },
      ),
    ).rejects.toThrow('simulated crash');

    const restart = planFor(dlq, { sampleSize: 1, runId: 'exec-2', mode: 'sample-only' });
    await sample({ plan: restart, preflight });
    const delivered = await drain(sqsClient(), dlq.sources[0]?.url as string);
    const keys = delivered.map((m) => m.MessageAttributes?.['idempotency-key']?.StringValue as string);
    const twice = keys.filter((k, i) => keys.indexOf(k) !== i);
    expect(twice).toHaveLength(1);

    const report = await reconcile({ plan: restart, outcome: 'sample-only' });
    expect(report).toMatchObject({ redriven: 1, inDlq: 1, possibleDuplicateSends: 1, takenOver: 1 });
    expect(report.possibleDuplicates.map((d) => d.idempotencyKey)).toEqual(twice);
  });
});
