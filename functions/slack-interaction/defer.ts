/**
 * Runs the interaction's follow-up after the HTTP ack: the function invokes itself
 * asynchronously (`InvocationType: 'Event'`), the documented way to keep working after a Lambda
 * has answered (an invocation is frozen once it returns).
 *
 * Set the function's async `MaximumRetryAttempts` low (the follow-up is safe to repeat: a CLOSED
 * approval sends nothing, but a repeat may post the Slack update twice).
 *
 * @see https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html
 * @see https://docs.aws.amazon.com/lambda/latest/dg/invocation-async.html
 */
import { TransientError } from '#platform/errors.js';
import type { LambdaInvoker } from '#platform/lambda-invoke.js';
import type { FollowUp } from './interaction.js';

/** The event the function receives for a deferred follow-up. */
export interface FollowUpEvent {
  slackFollowUp: FollowUp;
}

/**
 * A `defer` port that async-invokes `functionName` with `{ slackFollowUp }`.
 *
 * @param functionName - the interaction function's own name (`AWS_LAMBDA_FUNCTION_NAME`).
 * @param lambda - the invoker (platform/lambda-invoke.ts, the one path of every asynchronous invocation).
 * @throws TransientError when Lambda does not accept the invocation (anything but 202 Accepted).
 */
export function lambdaDefer(
  lambda: LambdaInvoker,
  functionName: string,
): (followUp: FollowUp) => Promise<void> {
  return async (followUp) => {
    const event: FollowUpEvent = { slackFollowUp: followUp };
    const out = await lambda.invokeAsync(functionName, JSON.stringify(event));
    if (!out.ok) throw new TransientError(`async self-invoke refused: ${out.code} ${out.message}`);
  };
}
