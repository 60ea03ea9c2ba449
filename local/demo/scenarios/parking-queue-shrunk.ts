/**
 * `parking-queue-shrunk`: one do-not-redrive message is 1.5 KB, and after the approval and its
 * recheck (both of which would refuse it) someone lowers the parking queue's
 * MaximumMessageSize to 1 KiB. Park parks the other poison and refuses on that one: a move task
 * would carry it back to its source. The run ends `Failed`, and its report is still true: the
 * failure is reconciled before it is reported (ReconcileAfterFailure), so `parked` is what the
 * parking queue holds, the rest is still in the DLQ, nothing is missing and the counts add up.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html
 */
import { SendMessageCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { queueDepth } from '../queues.js';
import { conservationProblems, type RunReport } from '../report.js';
import type { Scenario, ScenarioContext } from './types.js';

/** The parking queue's MaximumMessageSize after the change, bytes (the smallest SQS allows). */
export const SHRUNK_MAX_BYTES = 1024;

function checkParkingReport(report: RunReport, ctx: ScenarioContext): string[] {
  const problems = conservationProblems(report);
  const parkingDepth = ctx.notes.parkingDepth as number | undefined;
  if (parkingDepth === undefined) problems.push('the parking queue was not read after the run');
  else if (report.parked !== parkingDepth)
    problems.push(`the report says parked ${report.parked}, the parking queue holds ${parkingDepth}`);
  if (report.parked === 0) problems.push('nothing was parked before Park refused');
  if (!/larger than the parking queue's MaximumMessageSize/.test(report.reason ?? ''))
    problems.push(`the reason does not name the too-large message: ${report.reason ?? '-'}`);
  if (report.bulkMoved > 0 || report.sampled > 0)
    problems.push(`moved ${report.sampled + report.bulkMoved} toward the source after Park refused`);
  return problems;
}

export const parkingQueueShrunk: Scenario = {
  name: 'parking-queue-shrunk',
  summary: `after the approval, the parking queue's MaximumMessageSize is lowered below one poison message: Park parks the rest and refuses; the run fails and its report still says where every message is`,
  expected: {
    outcome: 'Failed',
    text: `Park refuses the message larger than ${SHRUNK_MAX_BYTES} bytes; reconciled before the failure is reported: parked = the parking queue, the rest in the DLQ, nothing missing, counts add up`,
  },
  incident: (messages) => ({ name: 'parking-shrunk', messages: messages ?? 60 }),
  async beforeTriage(ctx) {
    // A permanent failure of 1.5 KB, straight into the DLQ (a producer's oversized payload).
    await ctx.sqs.send(
      new SendMessageCommand({
        QueueUrl: ctx.incident.queues.dlqUrl,
        MessageBody: JSON.stringify({ orderId: 'oversized-order', notes: 'n'.repeat(1500) }),
        MessageAttributes: { 'error-class': { DataType: 'String', StringValue: 'SyntaxError' } },
      }),
    );
    ctx.say('Sent one 1.5 KB permanent failure straight to the DLQ.');
  },
  async onTaskResult(ctx, state) {
    if (state !== 'CheckDlqStillHasMessages' || ctx.notes.shrunk) return;
    ctx.notes.shrunk = true;
    await ctx.sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: ctx.incident.queues.parkingUrl,
        Attributes: { MaximumMessageSize: String(SHRUNK_MAX_BYTES) },
      }),
    );
    ctx.say(`Someone set the parking queue's MaximumMessageSize to ${SHRUNK_MAX_BYTES} after the recheck.`);
  },
  async afterRun(ctx) {
    const depth = await queueDepth(ctx.sqs, ctx.incident.queues.parkingUrl);
    ctx.notes.parkingDepth = depth.visible + depth.inFlight + depth.delayed;
  },
  check: checkParkingReport,
};
