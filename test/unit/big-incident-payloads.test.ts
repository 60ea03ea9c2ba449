/**
 * Step Functions refuses a state input or output over 256 KiB, and DynamoDB an item over 400 KB.
 * A 100,000-message incident must stay under both: here on synthetic data through the real code
 * (envelopes built by `buildEnvelope`, the summary merged step by step as the inventory session
 * does, the start input triage sends, the continuation's input), since a full 100,000-message run
 * is too slow for `npm test` (it is `npm run big-incident`, which reports the largest payload of a
 * real run). The workflow test test/workflow/big-incident.test.ts checks every state's payload
 * of a real, smaller run.
 */
import { describe, expect, it } from 'vitest';
import { ExecutionInput } from '#incident/execution-input.js';
import { buildEnvelope } from '#inventory/envelope.js';
import { type InventorySession, summaryOfSession } from '#inventory/inventory-session.js';
import { addToSummary, emptySummary, MAX_CAUSE_GROUPS, mergeSummaries } from '#inventory/summary.js';
import { continuationName } from '../../functions/continue-inventory/continue-inventory.js';
import { workflowInputOf } from '../../functions/triage/triage.js';

const MESSAGES = 100_000;
/** One invocation's message budget (TRIAGE_MESSAGE_BUDGET's default). */
const STEP = 5_000;
const SOURCES = 50;
const KIB = 1024;
const DLQ = 'arn:aws:sqs:us-east-1:123456789012:orders-dlq';
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

describe('a 100,000-message incident stays under the payload and item limits', () => {
  it('the summary of 100,000 messages, each with its own cause and a 2 KB reason, is bounded, and the start and continuation inputs carry ids only', () => {
    const now = Date.now();
    let merged = emptySummary();
    for (let start = 0; start < MESSAGES; start += STEP) {
      // One invocation's envelopes, summarised, then merged into the session's summary.
      const step = emptySummary();
      for (let i = start; i < start + STEP; i++) {
        const { envelope } = buildEnvelope(
          {
            MessageId: `m-${i}`,
            Body: JSON.stringify({ orderId: i }),
            Attributes: {
              SentTimestamp: String(now - i * 1000),
              ApproximateReceiveCount: '5',
              DeadLetterQueueSourceArn: `arn:aws:sqs:us-east-1:123456789012:orders-${i % SOURCES}`,
            },
            MessageAttributes: {
              errorClass: { DataType: 'String', StringValue: `DependencyError${i}` },
              errorMessage: { DataType: 'String', StringValue: `upstream ${i} failed: ${'x'.repeat(2000)}` },
            },
          },
          {
            dlqArn: DLQ,
            fifo: false,
            retentionPeriodSeconds: 345_600,
            now,
            registration: {},
            incidentId: 'inc-big',
            inventory: { id: 'inc-big', step: start / STEP },
          },
        );
        addToSummary(step, envelope, now);
      }
      merged = mergeSummaries(merged, step);
    }

    expect(merged.messageCount).toBe(MESSAGES);
    expect(Object.keys(merged.countBySource)).toHaveLength(SOURCES);
    // At most MAX_CAUSE_GROUPS fingerprints, the rest counted in one `<other causes>` group.
    expect(merged.causes.length).toBeLessThanOrEqual(MAX_CAUSE_GROUPS + 1);
    expect(merged.causes.reduce((n, c) => n + c.count, 0)).toBe(MESSAGES);
    // Each message had its own cause: the groups were cut, not merely few.
    expect(merged.causes.length).toBeGreaterThan(MAX_CAUSE_GROUPS / 2);

    const session = {
      dlqArn: DLQ,
      dlqUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/orders-dlq',
      inventoryId: 'inc-big',
      incidentId: 'inc-big',
      leaseOwner: 'alarm@1',
      status: 'COMPLETE',
      startedAt: now,
      holdUntil: now,
      depthAtStart: MESSAGES,
      inventoried: MESSAGES,
      created: MESSAGES,
      held: 0,
      holdPages: MESSAGES / 500,
      releasedPages: MESSAGES / 500,
      invocations: MESSAGES / STEP,
      activeMs: 600_000,
      extensions: 0,
      stopReason: null,
      holdLimit: 110_000,
      sampled: false,
      releaseFailures: 0,
      summary: merged,
      warnings: [],
      version: MESSAGES / STEP,
      updatedAt: new Date(now).toISOString(),
    } satisfies InventorySession;
    // The session item (DynamoDB's 400 KB item limit) and the incident's summary.
    expect(bytes(session)).toBeLessThan(400 * 1000);
    const { summary } = summaryOfSession(session, now);
    expect(summary.messageCount).toBe(MESSAGES);
    expect(summary.coverage).toMatchObject({ inventoried: MESSAGES, complete: true, sampled: false });
    expect(bytes(summary)).toBeLessThan(256 * KIB);

    // The start input triage sends and the one a continuation merges into it: ids, valid input.
    const input = workflowInputOf(DLQ, 'inc-big', 'inc-big');
    expect(ExecutionInput.safeParse(input).success).toBe(true);
    expect(bytes(input)).toBeLessThan(1 * KIB);
    const continued = { ...input, inventoryId: 'inc-big', continuation: 40 };
    expect(ExecutionInput.safeParse(continued).success).toBe(true);
    expect(bytes(continued)).toBeLessThan(1 * KIB);
    expect(continuationName('inc-big', 40)).toBe('inc-big-c40');
  });
});
