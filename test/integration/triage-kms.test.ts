/**
 * KMS-encrypted DLQs on the local stack. The SQS stand-in never calls KMS, so these run behind
 * the KMS-enforcing proxy (`local/aws-standins/sqs-kms.ts`): a receive on a queue whose key the
 * KMS stand-in says cannot be used answers SQS's own `Kms*` error, as SQS does.
 */

import { readFileSync } from 'node:fs';
import {
  CreateKeyCommand,
  DisableKeyCommand,
  KMSClient,
  ScheduleKeyDeletionCommand,
} from '@aws-sdk/client-kms';
import { SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sqsClient } from '#platform/clients.js';
import { createTriageHandler } from '../../functions/triage/handler.js';
import type { TriageResult } from '../../functions/triage/triage.js';
import type { WorkflowStarter } from '../../functions/triage/workflow-starter.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { createMemoryNotifier } from '../support/memory-notifier.js';
import { queueDepth, seedDlq } from '../support/seed-dlq.js';
import { scaled } from '../support/timeouts.js';

const ACCOUNT = '111122223333';

/** The sample EventBridge alarm event for `orders-dlq`, at a new state timestamp. */
function alarmAt(timestamp: string): Record<string, unknown> {
  const event = JSON.parse(
    readFileSync(new URL('../../events/cloudwatch/alarm-state-change.json', import.meta.url), 'utf8'),
  ) as { detail: { state: { timestamp: string } } };
  event.detail.state.timestamp = timestamp;
  return event as unknown as Record<string, unknown>;
}

describe('triage of a KMS-encrypted DLQ (KMS-enforcing SQS proxy)', () => {
  let stack: LocalStack;
  let dlq: Awaited<ReturnType<typeof seedDlq>>;
  const notifier = createMemoryNotifier();
  const workflow: WorkflowStarter = {
    startWorkflow: async ({ incidentId }) => ({
      executionArn: `arn:aws:states:us-east-1:${ACCOUNT}:execution:redrive:${incidentId}`,
      alreadyStarted: false,
    }),
  };
  const handler = createTriageHandler({ overrides: { workflow, notifier } });
  const invoke = (event: unknown) =>
    handler(
      event,
      lambdaContext({ functionName: 'triage', timeoutMs: scaled(120_000), accountId: ACCOUNT }),
    ) as Promise<TriageResult>;
  const kms = () => new KMSClient({});
  const encryptWith = async (keyId: string) =>
    sqsClient().send(
      new SetQueueAttributesCommand({ QueueUrl: dlq.dlqUrl, Attributes: { KmsMasterKeyId: keyId } }),
    );
  const envelopeCount = async () => {
    let n = 0;
    for await (const _ of createEnvelopeStore().listEnvelopes(dlq.dlqArn)) n++;
    return n;
  };

  beforeAll(async () => {
    stack = await startLocalStack({ accountId: ACCOUNT });
    dlq = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'orders-dlq',
      sourceNames: ['orders-queue'],
      messages: [{ body: '{"orderId":"o-1"}' }, { body: '{"orderId":"o-2"}' }, { body: '{"orderId":"o-3"}' }],
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });
  beforeEach(() => {
    notifier.sent.splice(0);
  });

  it('refuses the DLQ of a disabled key with a named reason and a notification saying the same, inventorying nothing', async () => {
    const key = (await kms().send(new CreateKeyCommand({ Description: 'orders' }))).KeyMetadata
      ?.Arn as string;
    await encryptWith(key);
    await kms().send(new DisableKeyCommand({ KeyId: key }));

    const result = await invoke(alarmAt('2026-01-02T10:35:00.000+0000'));

    expect(result.queues.map((q) => q.outcome)).toEqual(['refused']);
    const reason = result.queues[0]?.reason ?? '';
    expect(reason).toContain(`DLQ orders-dlq is encrypted with KMS key ${key}`);
    expect(reason).toContain("triage's kms:Decrypt: KmsDisabled");
    const notice = notifier.sent.find((n) => n.kind === 'kms-key-unusable');
    expect(notice?.text).toBe(reason);
    expect(notice?.fields).toMatchObject({ kmsKey: key, kmsAction: 'kms:Decrypt', sqsError: 'KmsDisabled' });
    expect(await envelopeCount()).toBe(0);
    expect((await queueDepth(sqsClient(), dlq.dlqUrl)).visible).toBe(3);
  });

  it('names an access denial and a key pending deletion the way SQS does (KmsAccessDenied, KmsInvalidState)', async () => {
    const denied = (await kms().send(new CreateKeyCommand({}))).KeyMetadata?.KeyId as string;
    await encryptWith(denied);
    stack.standins.kms.denyUse(denied, 'local');
    const first = await invoke(alarmAt('2026-01-02T10:40:00.000+0000'));
    expect(first.queues[0]?.reason).toContain('kms:Decrypt: KmsAccessDenied');

    const deleting = (await kms().send(new CreateKeyCommand({}))).KeyMetadata?.KeyId as string;
    await kms().send(new ScheduleKeyDeletionCommand({ KeyId: deleting, PendingWindowInDays: 7 }));
    await encryptWith(deleting);
    const second = await invoke(alarmAt('2026-01-02T10:45:00.000+0000'));
    expect(second.queues[0]?.reason).toContain('kms:Decrypt: KmsInvalidState');
    expect(notifier.sent.map((n) => n.kind)).toEqual(['kms-key-unusable', 'kms-key-unusable']);
    expect(await envelopeCount()).toBe(0);
  });

  it('inventories the same DLQ normally once its key is usable (the proxy forwards everything else)', async () => {
    const usable = (await kms().send(new CreateKeyCommand({}))).KeyMetadata?.Arn as string;
    await encryptWith(usable);
    const result = await invoke(alarmAt('2026-01-02T10:50:00.000+0000'));
    expect(result.queues.map((q) => q.outcome)).toEqual(['triaged']);
    expect(await envelopeCount()).toBe(3);
    expect(notifier.sent.filter((n) => n.kind === 'kms-key-unusable')).toEqual([]);
  });
});
