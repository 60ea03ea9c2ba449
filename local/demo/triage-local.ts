/**
 * Local glue between the alarm and the real triage handler: invokes the real triage handler, with
 * a Lambda-like context, on the event the local alarm evaluator (local/alarm-evaluator.ts) emits,
 * with the local workflow starter as its `startWorkflow` port.
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html
 */

import { createTriageHandler } from '../../functions/triage/handler.js';
import type { TriageResult } from '../../functions/triage/triage.js';
import type { WorkflowStarter } from '../../functions/triage/workflow-starter.js';
import { lambdaContext } from '../lambda-context.js';

/**
 * Runs the real triage handler on `event`, starting workflows through `workflow`.
 *
 * @param timeoutMs - the triage function's timeout (its inventory budget), milliseconds.
 */
export async function runTriage(
  event: unknown,
  workflow: WorkflowStarter,
  timeoutMs = 300_000,
): Promise<TriageResult> {
  const handler = createTriageHandler({ overrides: { workflow } });
  return handler(event, lambdaContext({ functionName: 'TriageFunction', timeoutMs }));
}
