/**
 * Block Kit limits on the approval request: Slack refuses a whole message (`invalid_blocks`) when
 * one section's text passes 3,000 characters or a header 150, so an incident with many source
 * queues, long error classes or markup-heavy reasons must still produce a postable message.
 *
 * @see https://api.slack.com/reference/block-kit/blocks#section
 */
import { describe, expect, it } from 'vitest';
import {
  alarmClearedApprovalMessage,
  approvalRequestMessage,
  MAX_STORED_REQUEST_BYTES,
  parseStoredRequestMessage,
  storedRequestMessage,
  threadNotice,
} from '#approval/slack-messages.js';
import type { IncidentSummary } from '#inventory/model.js';

const NOW = 1_767_350_400_000;
const sourceArns = Array.from(
  { length: 60 },
  (_, i) =>
    `arn:aws:sqs:us-east-1:111122223333:${'orders-service-queue-'.padEnd(70, 'x')}${String(i).padStart(3, '0')}`,
);
const summary: IncidentSummary = {
  messageCount: 120_000,
  countBySource: Object.fromEntries(sourceArns.map((a) => [a, 2000])),
  causes: Array.from({ length: 5 }, (_, i) => ({
    fingerprint: `f${i}`,
    errorClass: `com.example.${'Very'.repeat(400)}LongException${i}`,
    classification: 'permanent',
    count: 100 - i,
    exampleMessageId: `m-${i}`,
    exampleReason: '<&>'.repeat(300),
  })) as unknown as IncidentSummary['causes'],
  countByClassification: { transient: 0, permanent: 500, poison: 0, systemic: 0, unknown: 0 } as never,
  oldestMessageAgeMs: 3_600_000,
  earliestRetentionDeadline: NOW + 3_600_000,
  expiringWithin24h: 5,
  partial: false,
};

function largestRequest() {
  return approvalRequestMessage({
    approvalId: 'apr-0123456789abcdef0123456789abcdef',
    incidentId: 'inc-0123456789abcdef01234567',
    dlqArn: `arn:aws:sqs:us-east-1:111122223333:${'d'.repeat(80)}`,
    summary,
    plan: {
      mode: 'redrive',
      sampleSize: 5,
      rampRates: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      dwellSeconds: 60,
      destinationArn: null,
      discardPoison: false,
      requestedBy: '<'.repeat(128),
    },
    preflight: {
      dlqDepth: 120_000,
      sourceArns,
      fifo: false,
      earliestRetentionDeadline: NOW + 3_600_000,
      warnings: Array.from({ length: 40 }, (_, i) => `warning ${i}: ${'&'.repeat(60)}`),
    },
    nowMs: NOW,
    expiresAtMs: NOW + 3_600_000,
  });
}

type Block = { type: string; text?: { text: string }; elements?: Array<{ text?: unknown }> };
const textsOf = (blocks: Block[]) =>
  blocks.flatMap((block) => {
    const own = block.text ? [[block.type, block.text.text] as const] : [];
    const inner = (block.elements ?? []).flatMap((e) =>
      typeof e.text === 'string' ? [[`${block.type}-element`, e.text] as const] : [],
    );
    return [...own, ...inner];
  });

describe('approval request within Block Kit limits', () => {
  it('C07 60 source queues, 1,600-character error classes, markup-heavy reasons and 40 warnings: every section <= 3000 characters, header <= 150', () => {
    const message = largestRequest();

    const texts = (message.blocks ?? []).flatMap((b) => {
      const block = b as { type: string; text?: { text: string }; elements?: Array<{ text?: unknown }> };
      const own = block.text ? [[block.type, block.text.text] as const] : [];
      const inner = (block.elements ?? []).flatMap((e) =>
        typeof e.text === 'string' ? [[`${block.type}-element`, e.text] as const] : [],
      );
      return [...own, ...inner];
    });
    expect(texts.length).toBeGreaterThan(3);
    for (const [type, text] of texts) {
      expect(text.length, `${type}: ${text.slice(0, 60)}`).toBeLessThanOrEqual(
        type === 'header' ? 150 : 3000,
      );
    }
    expect(message.text.length).toBeLessThanOrEqual(3000);
    expect((message.blocks ?? []).length).toBeLessThanOrEqual(50);
  });

  it('C04 the largest request stored in the approval record stays far under the 400 KB item limit, and its alarm-cleared update keeps every block within Block Kit limits', () => {
    const message = largestRequest();
    const stored = storedRequestMessage(message);
    expect(stored).not.toBeNull();
    const bytes = Buffer.byteLength(stored ?? '', 'utf8');
    // Measured: 7,784 bytes (7 blocks; reasons and error classes are cut before the 3,000 cap).
    expect(bytes).toBeGreaterThan(5_000);
    expect(bytes).toBeLessThan(10_000);
    expect(bytes).toBeLessThanOrEqual(MAX_STORED_REQUEST_BYTES);
    expect(parseStoredRequestMessage(stored)).toEqual({ text: message.text, blocks: message.blocks });

    const updated = alarmClearedApprovalMessage({
      approvalId: 'apr-0123456789abcdef0123456789abcdef',
      incidentId: 'inc-0123456789abcdef01234567',
      dlqArn: `arn:aws:sqs:us-east-1:111122223333:${'d'.repeat(80)}`,
      clearedAt: '2026-01-02T11:10:00.000Z',
      original: parseStoredRequestMessage(stored),
      postedAtMs: NOW,
    });
    const blocks = (updated.blocks ?? []) as Block[];
    expect(blocks.length).toBe((message.blocks ?? []).length + 1);
    expect(blocks.length).toBeLessThanOrEqual(50);
    for (const [type, text] of textsOf(blocks))
      expect(text.length, `${type}: ${text.slice(0, 60)}`).toBeLessThanOrEqual(
        type === 'header' ? 150 : 3000,
      );
    expect(updated.text.length).toBeLessThanOrEqual(3000);
  });

  it('a request that would pass 100,000 bytes is not stored (the alarm-cleared update falls back to note and buttons)', () => {
    const huge = {
      text: 'x',
      blocks: Array.from({ length: 40 }, () => ({
        type: 'section',
        text: { type: 'mrkdwn', text: '"'.repeat(3000) },
      })),
    };
    expect(storedRequestMessage(huge as never)).toBeNull();
  });

  it('a thread notice carrying a 32 KB failure cause full of markup stays within one 3000-character section, cut at a line and never inside an entity', () => {
    const cause = Array.from({ length: 800 }, (_, i) => `at <frame ${i}> & more`).join('\n');
    const message = threadNotice('failed', `Redrive.Failed: ${cause}`, { incidentId: 'inc-1' });
    const first = message.blocks?.[0] as { text: { text: string } };
    expect(first.text.text.length).toBeLessThanOrEqual(3000);
    expect(first.text.text.startsWith('*failed*: Redrive.Failed: at &lt;frame 0&gt; &amp; more')).toBe(true);
    expect(first.text.text.endsWith('\n…')).toBe(true);
    expect(first.text.text).not.toMatch(/&[a-z]*\n…$/);
  });
});
