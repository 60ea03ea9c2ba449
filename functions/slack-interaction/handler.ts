/**
 * Slack interactivity endpoint (Lambda Function URL) and its own deferred follow-up.
 *
 * A Function URL event is acknowledged by {@link acknowledgeInteraction} (200, empty body, within
 * Slack's 3 s); the slow part arrives back here as `{ slackFollowUp }` through an async
 * self-invocation and runs in {@link runFollowUp}. Ports come from `deps.ts`.
 *
 * Environment: `TABLE_NAME`, `SLACK_SECRET_ARN` (or `SLACK_BOT_TOKEN` + `SLACK_SIGNING_SECRET`),
 * `AWS_LAMBDA_FUNCTION_NAME` (set by Lambda).
 *
 * @see https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html
 */
import middy from '@middy/core';
import { parseOrThrow, standardMiddleware } from '#platform/middleware.js';
import * as z from '#platform/zod.js';
import { createAcknowledgeDeps, createFollowUpDeps } from './deps.js';
import { acknowledgeInteraction, FollowUp, FunctionUrlRequest, runFollowUp } from './interaction.js';

const FollowUpEvent = z.object({ slackFollowUp: FollowUp });

export const handler = middy()
  .use(standardMiddleware())
  .handler(async (event: unknown) => {
    if (event && typeof event === 'object' && 'slackFollowUp' in event) {
      const { slackFollowUp } = parseOrThrow(FollowUpEvent, event, 'follow-up event');
      return runFollowUp(slackFollowUp, await createFollowUpDeps());
    }
    const request = parseOrThrow(FunctionUrlRequest, event, 'Function URL event');
    return acknowledgeInteraction(request, await createAcknowledgeDeps());
  });
