import type { Message } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import type { EnvelopeStore } from '#inventory/envelope-store.js';
import { inventoryDlq } from '#inventory/inventory.js';
import { QueueRegistration } from '#inventory/model.js';
import type { QueueInfo, SqsQueues } from '#platform/sqs-queues.js';

const DLQ_ARN = 'arn:aws:sqs:us-east-1:111122223333:orders-dlq.fifo';

/** A FIFO DLQ as real SQS behaves: one receive per message group while its messages are in flight. */
function fifoQueue(groups: Record<string, number>) {
  const messages: Message[] = Object.entries(groups).flatMap(([group, n]) =>
    Array.from({ length: n }, (_, i) => ({
      MessageId: `${group}-${i}`,
      ReceiptHandle: `rh-${group}-${i}`,
      Body: `{"i":${i}}`,
      Attributes: {
        MessageGroupId: group,
        SentTimestamp: '1767330000000',
        ApproximateFirstReceiveTimestamp: '1767340000000',
      },
    })),
  );
  const blocked = new Set<string>();
  const released: string[] = [];
  let received = 0;
  const queues: SqsQueues = {
    resolveByName: async () => {
      throw new Error('unused');
    },
    // In flight: what the scan holds (nobody else receives from this queue).
    describe: async () =>
      ({ visible: messages.length, inFlight: received - released.length, delayed: 0 }) as QueueInfo,
    listDeadLetterSourceQueues: async () => [],
    async receive() {
      const out = messages.filter((m) => !blocked.has(m.Attributes?.MessageGroupId as string)).slice(0, 10);
      for (const m of out) {
        blocked.add(m.Attributes?.MessageGroupId as string);
        messages.splice(messages.indexOf(m), 1);
      }
      received += out.length;
      return out;
    },
    async changeVisibility(_url, handles) {
      released.push(...handles);
      return 0;
    },
  };
  return { queues, released };
}

const store: EnvelopeStore = {
  putEnvelopes: async (items: readonly unknown[]) => ({
    written: items.length,
    unprocessed: 0,
    created: items.length,
    createdMessageIds: [],
    unprocessedMessageIds: [],
    duplicates: 0,
    duplicateMessageIds: [],
  }),
} as unknown as EnvelopeStore;

function dlq(visible: number): QueueInfo {
  return {
    url: 'https://sqs.us-east-1.amazonaws.com/111122223333/orders-dlq.fifo',
    arn: DLQ_ARN,
    name: 'orders-dlq.fifo',
    fifo: true,
    retentionPeriodSeconds: 345_600,
    visibilityTimeoutSeconds: 30,
    visible,
    inFlight: 0,
    delayed: 0,
    delaySeconds: 0,
    maximumMessageSize: 262_144,
    redrivePolicy: null,
    attributes: {},
  };
}

describe('inventory of a FIFO DLQ', () => {
  it('C08 C10 reports a partial inventory when message groups hide messages behind in-flight ones, and releases what it held', async () => {
    const { queues, released } = fifoQueue({ g1: 15, g2: 3 });

    const result = await inventoryDlq(
      {
        dlq: dlq(18),
        registration: QueueRegistration.parse({ dlqArn: DLQ_ARN }),
        incidentId: 'inc-1',
        waitTimeSeconds: 0,
      },
      { queues, envelopes: store, remainingTimeMs: () => 60_000, now: () => 1767350400000 },
    );

    expect([result.partial, result.stopReason]).toEqual([true, 'fifo-groups-blocked']);
    expect(result.envelopes).toHaveLength(13);
    expect(result.warnings[0]).toBe(
      'FIFO DLQ: saw 13 of 18 messages; the rest wait behind in-flight messages of their message group',
    );
    expect(released).toHaveLength(13);
    expect(result.envelopes.every((e) => e.retentionDeadlineApproximate)).toBe(true);
  });

  it('calls a FIFO inventory complete when it saw every message the queue reported', async () => {
    const { queues } = fifoQueue({ g1: 4, g2: 3 });
    const result = await inventoryDlq(
      {
        dlq: dlq(7),
        registration: QueueRegistration.parse({ dlqArn: DLQ_ARN }),
        incidentId: 'inc-1',
        waitTimeSeconds: 0,
      },
      { queues, envelopes: store, remainingTimeMs: () => 60_000, now: () => 1767350400000 },
    );
    expect([result.partial, result.stopReason, result.envelopes.length]).toEqual([false, 'empty', 7]);
  });
});
