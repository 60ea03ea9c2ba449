/**
 * `hand-deleted`: while the ramp runs, someone deletes five messages from the DLQ by hand (a
 * console "delete", a script). Nothing records where they went, so the report must not call them
 * redriven: Reconcile bounds "redriven by the move task" by what the task reports as moved, finds
 * five envelopes it cannot explain, reports `missing: 5` and `balanced: false`, and names the five
 * (the consumer's processed-key records show which moved messages arrived, so the other five are
 * exactly the deleted ones).
 */
import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { waitUntilDrained } from '../queues.js';
import { conservationProblems, type RunReport } from '../report.js';
import type { Scenario, ScenarioContext } from './types.js';

/** How many messages the scenario deletes by hand. */
export const HAND_DELETED = 5;

async function deleteByHand(ctx: ScenarioContext, count: number): Promise<string[]> {
  const { dlqUrl } = ctx.incident.queues;
  const deleted: string[] = [];
  for (let attempt = 0; deleted.length < count && attempt < 20; attempt++) {
    const out = await ctx.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: dlqUrl,
        MaxNumberOfMessages: Math.min(10, count - deleted.length),
        VisibilityTimeout: 30,
        WaitTimeSeconds: 1,
      }),
    );
    for (const m of out.Messages ?? []) {
      await ctx.sqs.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: m.ReceiptHandle }));
      deleted.push(m.MessageId as string);
    }
  }
  return deleted;
}

function checkMissing(report: RunReport, ctx: ScenarioContext): string[] {
  const deleted = ((ctx.notes.deleted as string[] | undefined) ?? []).slice().sort();
  const named = report.missingMessages.map((m) => m.messageId).sort();
  const problems = conservationProblems(report).filter((p) => !p.startsWith('missing '));
  if (deleted.length !== HAND_DELETED)
    problems.push(`deleted ${deleted.length} by hand, meant ${HAND_DELETED}`);
  if (report.missing !== deleted.length)
    problems.push(`missing ${report.missing}, expected ${deleted.length}`);
  if (report.balanced) problems.push('the report says balanced although messages were deleted by hand');
  if (named.join() !== deleted.join())
    problems.push(
      `missingMessages names ${named.join(', ') || 'nothing'}, deleted were ${deleted.join(', ')}`,
    );
  return problems;
}

export const handDeleted: Scenario = {
  name: 'hand-deleted',
  summary: `${HAND_DELETED} messages are deleted from the DLQ by hand during the ramp: the report says they are missing and names them`,
  expected: {
    outcome: 'Done',
    text: `missing ${HAND_DELETED}, balanced false, the ${HAND_DELETED} named by MessageId and idempotency key`,
  },
  incident: (messages) => ({ name: 'hand-deleted', messages: messages ?? 120 }),
  async onTaskResult(ctx, state, result) {
    if (state === 'StartMoveTask' && ctx.notes.deleted === undefined) {
      ctx.notes.deleted = await deleteByHand(ctx, HAND_DELETED);
      ctx.say(`Deleted ${HAND_DELETED} messages from the DLQ by hand while the move task runs.`);
    }
    // The consumer records each key it processed: let it finish the moved messages before
    // Reconcile reads those records (the health gate's return window does the same).
    if ((result as { decision?: string } | null)?.decision === 'done')
      await waitUntilDrained(ctx.sqs, ctx.incident.queues.sourceUrl, { timeoutMs: 60_000, quietMs: 1500 });
  },
  check: checkMissing,
};
