/**
 * Extended-client (S3 pointer) messages on the local stack: S3 is s3rver behind the stand-in
 * skeleton (its call record shows what the pipeline asked of S3), the real triage inventory,
 * Preflight, SampleRedrive and Park handlers.
 */
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEnvelopeStore, type StoredEnvelope } from '#inventory/envelope-store.js';
import { payloadGoneReason } from '#inventory/payload-pointer.js';
import { sqsClient } from '#platform/clients.js';
import { createMoveTaskDeps } from '../../functions/move-task/deps.js';
import { handler as parkHandler } from '../../functions/park/handler.js';
import type { ParkResult } from '../../functions/park/park.js';
import { handler as preflightHandler } from '../../functions/preflight/handler.js';
import type { PreflightResult } from '../../functions/preflight/preflight.js';
import { handler as sampleHandler } from '../../functions/sample-redrive/handler.js';
import type { SampleRedriveResult } from '../../functions/sample-redrive/sample-redrive.js';
import { StandinError } from '../../local/aws-standins/server.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import {
  createQueue,
  drain,
  type InventoriedDlq,
  lambdaContext,
  planFor,
  seedAndInventory,
} from '../support/redrive-fixtures.js';
import { seedDlq } from '../support/seed-dlq.js';

const BUCKET = 'orders-large-payloads';
const pointer = (pointerClass: string, key: string) =>
  JSON.stringify([pointerClass, { s3BucketName: BUCKET, s3Key: key }]);
const V2 = 'software.amazon.payloadoffloading.PayloadS3Pointer';
const V1 = 'com.amazon.sqs.javamessaging.MessageS3Pointer';

describe('extended-client messages: pointers kept, gone payloads held out and parked (S3 via s3rver)', () => {
  let stack: LocalStack;
  const s3 = () => new S3Client({});
  let counter = 0;
  const envelopes = async (dlq: InventoriedDlq) => {
    const all: StoredEnvelope[] = [];
    for await (const e of createEnvelopeStore().listEnvelopes(dlq.dlqArn)) all.push(e);
    return all;
  };
  const byBody = (all: StoredEnvelope[], fragment: string) =>
    all.find(
      (e) =>
        JSON.stringify(e.payload ?? {}).includes(fragment) || e.messageAttributes.n?.stringValue === fragment,
    );
  const seed = async () => {
    counter += 1;
    await s3().send(
      new PutObjectCommand({ Bucket: BUCKET, Key: `present-${counter}`, Body: 'x'.repeat(300_000) }),
    );
    await s3().send(new PutObjectCommand({ Bucket: BUCKET, Key: `gone-${counter}`, Body: 'y'.repeat(10) }));
    const dlq = await seedAndInventory({
      sqs: sqsClient(),
      dlqName: `ext-${counter}-dlq`,
      sourceNames: [`ext-${counter}-src`],
      messages: [
        {
          body: pointer(V2, `present-${counter}`),
          attributes: { ExtendedPayloadSize: { DataType: 'Number', StringValue: '300000' } },
        },
        {
          body: pointer(V1, `gone-${counter}`),
          attributes: { SQSLargePayloadSize: { DataType: 'Number', StringValue: '10' } },
        },
        { body: '{"orderId":"plain"}', attributes: { n: { DataType: 'String', StringValue: 'plain' } } },
      ],
      incidentId: `inc-ext-${counter}`,
    });
    // The producer's lifecycle rule (or a cleanup job) removed one payload after dead-lettering.
    await s3().send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `gone-${counter}` }));
    stack.standins.s3.calls.splice(0);
    return dlq;
  };

  beforeAll(async () => {
    stack = await startLocalStack();
    await s3().send(new CreateBucketCommand({ Bucket: BUCKET }));
  });
  afterAll(async () => {
    await stack?.stop();
  });
  beforeEach(() => {
    stack.standins.s3.clearFaults();
  });

  it('stores the pointer of both body forms (bucket, key, size from either reserved attribute) without the payload', async () => {
    const dlq = await seed();
    const all = await envelopes(dlq);

    const v2 = byBody(all, `present-${counter}`);
    expect(v2?.payload).toEqual({
      bucket: BUCKET,
      key: `present-${counter}`,
      sizeBytes: 300_000,
      pointerClass: V2,
    });
    expect(v2?.bodyBytes).toBe(Buffer.byteLength(pointer(V2, `present-${counter}`)));
    expect(byBody(all, `gone-${counter}`)?.payload).toEqual({
      bucket: BUCKET,
      key: `gone-${counter}`,
      sizeBytes: 10,
      pointerClass: V1,
    });
    expect(byBody(all, 'plain')?.payload).toBeUndefined();
    // Inventory never asks S3 anything.
    expect(stack.standins.s3.calls).toEqual([]);
  });

  it('names the gone payload before approval, holds it out of the sample, parks it with the reason, and only ever HEADs S3', async () => {
    const dlq = await seed();
    const parkingUrl = await createQueue(sqsClient(), `ext-${counter}-parking`);
    const plan = planFor(dlq, { parkingQueueUrl: parkingUrl, sampleSize: 5 });

    const checked = (await preflightHandler(
      { action: 'preflight', plan } as never,
      lambdaContext,
    )) as PreflightResult;

    expect(checked.ok).toBe(true);
    expect(checked.warnings).toContain(
      `1 extended-client message(s) point to S3 objects that are gone (s3://${BUCKET}/gone-${counter}): they are held out of the sample and parked before the bulk move (a move task cannot skip messages; redriving a pointer to nothing only fails the consumer again)`,
    );
    expect(checked.warnings).toContain(
      '1 do-not-redrive message(s) will be moved to the parking queue before the bulk move (a move task cannot skip messages)',
    );
    const gone = byBody(await envelopes(dlq), `gone-${counter}`);
    expect(gone?.payloadGoneAt).toMatch(/^\d{4}-\d\d-\d\dT/);

    const sample = (await sampleHandler(
      { plan, preflight: { verifyWindowSeconds: 1, fifo: false } } as never,
      lambdaContext,
    )) as SampleRedriveResult;
    expect(sample.sent).toBe(2);
    expect(sample.keys).not.toContain(gone?.idempotencyKey);

    const parked = (await parkHandler({ plan } as never, lambdaContext)) as ParkResult;
    expect(parked.parked).toBe(1);
    const after = byBody(await envelopes(dlq), `gone-${counter}`);
    expect(after?.state).toBe('PARKED');
    expect(after?.stateReason).toContain(payloadGoneReason({ bucket: BUCKET, key: `gone-${counter}` }));
    // The parking queue holds the pointer exactly as received: nothing was inlined or rewritten.
    expect((await drain(sqsClient(), parkingUrl)).map((m) => m.Body)).toEqual([
      pointer(V1, `gone-${counter}`),
    ]);
    expect([...new Set(stack.standins.s3.calls.map((c) => c.operation))]).toEqual(['HeadObject']);
  });

  it('refuses when S3 denies HeadObject, since without ListBucket a gone object answers 403 too, naming the bucket', async () => {
    const dlq = await seed();
    stack.standins.s3.fail({
      operation: 'HeadObject',
      error: new StandinError('AccessDenied', 'Access Denied', 403),
    });

    const checked = (await preflightHandler(
      { action: 'preflight', plan: planFor(dlq) } as never,
      lambdaContext,
    )) as PreflightResult;

    expect(checked.ok).toBe(false);
    expect(checked.refusal).toBe(
      `redrive refused: extended-client payloads in bucket(s) ${BUCKET} cannot be checked (HeadObject 403): grant s3:GetObject and s3:ListBucket on them (MonitoredDlq payloadBuckets); without ListBucket S3 answers a gone object with 403 too`,
    );
    expect(byBody(await envelopes(dlq), `gone-${counter}`)?.payloadGoneAt).toBeUndefined();
  });

  it('a dry run names the gone payload and counts it as parked in its forecast, and writes no mark', async () => {
    const dlq = await seed();
    const parkingUrl = await createQueue(sqsClient(), `ext-${counter}-parking`);

    const dry = (await preflightHandler(
      {
        action: 'preflight',
        plan: { ...planFor(dlq, { parkingQueueUrl: parkingUrl }), mode: 'dry-run' },
      } as never,
      lambdaContext,
    )) as PreflightResult;

    expect(dry.ok).toBe(true);
    expect(dry.warnings.join('\n')).toContain(`s3://${BUCKET}/gone-${counter}`);
    expect(dry.forecast?.toPark).toBe(1);
    expect(byBody(await envelopes(dlq), `gone-${counter}`)?.payloadGoneAt).toBeUndefined();
  });

  it('clears the mark when the payload object is back, so the message is redriven again', async () => {
    const dlq = await seed();
    await preflightHandler({ action: 'preflight', plan: planFor(dlq) } as never, lambdaContext);
    expect(byBody(await envelopes(dlq), `gone-${counter}`)?.payloadGoneAt).toBeDefined();
    await s3().send(new PutObjectCommand({ Bucket: BUCKET, Key: `gone-${counter}`, Body: 'restored' }));

    const again = (await preflightHandler(
      { action: 'recheck', plan: planFor(dlq) } as never,
      lambdaContext,
    )) as PreflightResult;

    expect(again.warnings.join(' ')).not.toContain('extended-client');
    expect(byBody(await envelopes(dlq), `gone-${counter}`)?.payloadGoneAt).toBeUndefined();
  });

  it('N02 checks the pointer of a message that dead-lettered after triage in the recheck, and marks it for Park', async () => {
    const dlq = await seed();
    const late = `late-${counter}`;
    await seedDlq({
      sqs: sqsClient(),
      dlqName: `ext-${counter}-dlq`,
      sourceNames: [`ext-${counter}-src`],
      messages: [{ body: pointer(V2, late) }],
    });
    const parkingUrl = await createQueue(sqsClient(), `ext-${counter}-parking`);

    const again = (await preflightHandler(
      {
        action: 'recheck',
        plan: planFor(dlq, { parkingQueueUrl: parkingUrl }),
        executionName: `x-${counter}`,
      } as never,
      lambdaContext,
    )) as PreflightResult;

    expect(again.lateArrivals).toBe(1);
    expect(again.warnings.join('\n')).toContain(`s3://${BUCKET}/${late}`);
    const marked = byBody(await envelopes(dlq), late);
    expect(marked?.lateArrival).toBe(true);
    expect(marked?.payloadGoneAt).toMatch(/^\d{4}-/);
  });

  it('N02 a pointer whose object is gone that dead-letters during the ramp is found by the gate and counted to park, not moved with the bulk move; one whose object exists is not', async () => {
    const dlq = await seed();
    const late = `ramp-late-${counter}`;
    const kept = `ramp-kept-${counter}`;
    await s3().send(new PutObjectCommand({ Bucket: BUCKET, Key: kept, Body: 'z'.repeat(20) }));
    await seedDlq({
      sqs: sqsClient(),
      dlqName: `ext-${counter}-dlq`,
      sourceNames: [`ext-${counter}-src`],
      messages: [{ body: pointer(V2, late) }, { body: pointer(V2, kept) }],
    });
    // MoveTask's own gate port, as its handler builds it (functions/move-task/deps.ts).
    const gate = createMoveTaskDeps(lambdaContext).newcomers;

    const found = await gate(planFor(dlq));

    expect([found.partial, found.payloadRefusal, found.late.length, found.toPark]).toEqual([
      false,
      null,
      2,
      1,
    ]);
    expect(found.warnings.join('\n')).toContain(`s3://${BUCKET}/${late}`);
    expect(found.warnings.join('\n')).not.toContain(kept);
    expect(byBody(await envelopes(dlq), late)?.payloadGoneAt).toMatch(/^\d{4}-/);
    expect(byBody(await envelopes(dlq), kept)?.payloadGoneAt).toBeUndefined();
    // Only HeadObject after the test's own PutObject: the pipeline never reads or deletes a payload.
    expect(stack.standins.s3.calls.map((c) => c.operation)).toEqual([
      'PutObject',
      'HeadObject',
      'HeadObject',
    ]);
  });
});
