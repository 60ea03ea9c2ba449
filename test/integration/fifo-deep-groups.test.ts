/**
 * Deep FIFO groups (issue 13, item 5; docs/redrive-workflow.md, "Deep FIFO groups") on the local
 * stack, which keeps SQS's FIFO rule (while a message of a group is in flight, a receive returns
 * nothing more of that group).
 * The real inventory, the real Preflight and Mover handlers, DynamoDB Local.
 */

import { readFileSync } from 'node:fs';
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { sqsClient } from '#platform/clients.js';
import { handler as preflightHandler } from '../../functions/preflight/handler.js';
import type { PreflightResult } from '../../functions/preflight/preflight.js';
import { createTriageHandler } from '../../functions/triage/handler.js';
import type { TriageResult } from '../../functions/triage/triage.js';
import { lambdaContext as triageContext } from '../../local/lambda-context.js';
import { createQueue, inventoryAs, lambdaContext, planFor, runMover } from '../support/redrive-fixtures.js';
import { queueDepth, type SeedMessage, seedDlq } from '../support/seed-dlq.js';
import { useTransferStack } from '../support/transfer-stack.js';

const preflight = (event: unknown) =>
  preflightHandler(event as never, lambdaContext) as Promise<PreflightResult>;
const oom = { 'error-class': { DataType: 'String', StringValue: 'OutOfMemoryError' } };
const timeout = { 'error-class': { DataType: 'String', StringValue: 'UpstreamTimeout' } };

/** `count` messages of group `group`, `{"group","seq"}` bodies; the seqs in `poison` crash the consumer. */
const groupOf = (group: string, count: number, poison: number[] = []): SeedMessage[] =>
  Array.from({ length: count }, (_, seq) => ({
    body: JSON.stringify({ group, seq }),
    groupId: group,
    attributes: {
      ...(poison.includes(seq) ? oom : timeout),
      seq: { DataType: 'Number', StringValue: String(seq) },
    },
  }));

/** Receives and deletes until two receives come back empty (a gated FIFO queue hands out a group ten at a time). */
async function consume(url: string): Promise<Message[]> {
  const all: Message[] = [];
  for (let empty = 0; empty < 2; ) {
    const out = await sqsClient().send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 30,
        MessageAttributeNames: ['All'],
        AttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const batch = out.Messages ?? [];
    if (batch.length === 0) {
      empty += 1;
      continue;
    }
    all.push(...batch);
    await sqsClient().send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: batch.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle as string })),
      }),
    );
  }
  return all;
}

const seqsBy = (messages: Message[]) => {
  const out: Record<string, number[]> = {};
  for (const m of messages) {
    const { group, seq } = JSON.parse(m.Body ?? '{}') as { group: string; seq: number };
    out[group] = [...(out[group] ?? []), seq];
  }
  return out;
};

describe('deep FIFO groups on the local stack, with SQS FIFO group blocking', () => {
  useTransferStack();

  it('the SQS stand-in keeps a FIFO message group blocked while one of its messages is in flight, and hands the rest out in order after the delete', async () => {
    const url = await createQueue(sqsClient(), 'gate-probe.fifo', { FifoQueue: 'true' });
    for (let b = 0; b < 3; b += 1)
      await sqsClient().send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: Array.from({ length: 10 }, (_, i) => ({
            Id: String(i),
            MessageBody: `m${b * 10 + i}`,
            MessageGroupId: i % 5 === 4 && b === 0 ? 'other' : 'g',
            MessageDeduplicationId: `d${b * 10 + i}`,
          })),
        }),
      );
    const receive = async () =>
      (
        await sqsClient().send(
          new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 30 }),
        )
      ).Messages ?? [];
    const first = await receive();
    // Both groups start; "g" stays blocked while its first messages are in flight.
    expect(first.map((m) => m.Body)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8', 'm9']);
    expect(await receive()).toEqual([]);
    await sqsClient().send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: first.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle as string })),
      }),
    );
    expect((await receive()).map((m) => m.Body)).toEqual([
      'm10',
      'm11',
      'm12',
      'm13',
      'm14',
      'm15',
      'm16',
      'm17',
      'm18',
      'm19',
    ]);
  });

  it('C08 triage of a FIFO DLQ whose group is deeper than a scan can see opens the incident and starts its workflow, saying how many of how many it saw', async () => {
    const seeded = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'triage-fifo-dlq.fifo',
      sourceNames: ['triage-fifo-src.fifo'],
      messages: [...groupOf('deep', 40), ...groupOf('short', 2)],
      timeoutMs: 120_000,
    });
    const starts: string[] = [];
    const handler = createTriageHandler({
      overrides: {
        workflow: {
          async startWorkflow({ incidentId }) {
            starts.push(incidentId);
            return {
              executionArn: `arn:aws:states:us-east-1:123456789012:execution:redrive:${incidentId}`,
              alreadyStarted: false,
            };
          },
        },
      },
    });
    const event = JSON.parse(
      readFileSync(new URL('../../events/cloudwatch/alarm-state-change.json', import.meta.url), 'utf8')
        .replaceAll('111122223333', '123456789012')
        .replaceAll('"orders-dlq"', '"triage-fifo-dlq.fifo"'),
    ) as unknown;

    const result = (await handler(
      event,
      triageContext({ functionName: 'triage', timeoutMs: 120_000, accountId: '123456789012' }),
    )) as TriageResult;

    const outcome = result.queues[0];
    expect([outcome?.outcome, starts.length]).toEqual(['triaged', 1]);
    expect(outcome?.reason).toMatch(
      /^\d+ messages inventoried of 42 \(FIFO: the rest wait behind their message group's first messages; the recording mover inventories them in order\), incident \S+, workflow started$/,
    );
    expect((await queueDepth(sqsClient(), seeded.dlqUrl)).visible).toBe(42);
  });

  it('C08 a FIFO DLQ with a group of 100: triage sees only what SQS hands out, Preflight sends the run to the recording mover, and the mover redrives the whole group in order across sample and steps while a group with a poisoned head stays in the DLQ untouched', async () => {
    const seeded = await seedDlq({
      sqs: sqsClient(),
      dlqName: 'deep-fifo-dlq.fifo',
      sourceNames: ['deep-fifo-src.fifo'],
      messages: [...groupOf('deep', 100), ...groupOf('headless', 12, [0]), ...groupOf('middle', 15, [6])],
      timeoutMs: 120_000,
    });
    const incidentId = 'inc-deep-fifo';
    const { inventory } = await inventoryAs(sqsClient(), seeded, incidentId);
    // Real SQS hands out one receive's worth of a group while the scan holds it: the first few
    // of each group, in order, and nothing behind them.
    const seen = inventory.envelopes.length;
    expect(inventory.stopReason).toBe('fifo-groups-blocked');
    expect(seen).toBeLessThanOrEqual(30);
    const seenSeqs: Record<string, number[]> = {};
    for (const e of inventory.envelopes) {
      const group = e.systemAttributes.MessageGroupId as string;
      seenSeqs[group] = [...(seenSeqs[group] ?? []), Number(e.messageAttributes.seq?.stringValue)];
    }
    for (const seqs of Object.values(seenSeqs)) expect(seqs).toEqual(seqs.map((_, i) => i));
    const poisonSeen = inventory.envelopes.filter((e) => e.classification === 'poison').length;

    const plan = planFor(
      { dlqArn: seeded.dlqArn, dlqUrl: seeded.dlqUrl, incidentId },
      {
        sampleSize: 5,
        rampRates: [100, 500],
        dwellSeconds: 2,
      },
    );
    const pre = await preflight({ action: 'preflight', plan });
    expect([pre.ok, pre.path, pre.parkFirst]).toEqual([true, 'mover', false]);
    // How many poison messages triage saw depends on how much SQS handed out (load): none, no warning.
    if (poisonSeen > 0)
      expect(pre.warnings).toContain(
        `FIFO: ${poisonSeen} do-not-redrive message(s) stay in the DLQ, each with every later message of its message group, in order: nothing is parked; the run report names the held groups`,
      );
    else expect(pre.warnings.join('\n')).not.toContain('do-not-redrive');
    expect(pre.warnings.join('\n')).toContain(`FIFO: ${127 - seen} message(s) not inventoried yet`);

    const { sample, state } = await runMover(plan, { verifyWindowSeconds: 1, fifo: pre.fifo });
    expect([sample.sent, state.decision]).toEqual([5, 'done']);
    // 100 of "deep", the 6 of "middle" before its poison; nothing of "headless".
    expect(state.moved).toBe(106);
    expect(state.fifoGroupsHeld?.groups).toBe(2);
    // The 19 behind the two poisoned messages are held, not selected: those the last pass saw
    // (SQS hands out nothing of a group behind a held message) are counted held; with the 2
    // poisoned (not selected) and the 106 moved they add up to what the mover saw.
    const held = state.heldBehind ?? 0;
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(19);
    expect(state.notSelected).toBe(2);
    expect(state.reason).toMatch(/^the recording mover moved 106 message\(s\) of 106 selected; /);
    expect(state.reason).toContain(
      `106 moved + 0 left + ${held} FIFO-held + 2 not selected = ${108 + held} seen`,
    );
    const delivered = seqsBy(await consume(seeded.sources[0]?.url as string));
    expect(delivered.deep).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(delivered.middle).toEqual([0, 1, 2, 3, 4, 5]);
    expect(delivered.headless).toBeUndefined();

    // What stays is each held group from its poisoned message on, in order.
    expect((await queueDepth(sqsClient(), seeded.dlqUrl)).visible).toBe(21);
    const left = seqsBy(await consume(seeded.dlqUrl));
    expect(left.headless).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(left.middle).toEqual([6, 7, 8, 9, 10, 11, 12, 13, 14]);
    expect(state.fifoGroupsHeld?.examples.join('; ')).toMatch(
      /headless at [\w-]+ \(classified poison: name it in selection\.causes/,
    );
    // Every message the mover moved has an envelope: the 97 triage could not see were inventoried as it reached them.
    const redriven: string[] = [];
    for await (const e of createEnvelopeStore().listEnvelopes(seeded.dlqArn))
      if (e.state === 'REDRIVEN') redriven.push(e.messageId);
    expect(redriven).toHaveLength(106);
  });
});
