/**
 * Slack interactivity endpoint (Lambda Function URL) and its own deferred follow-up.
 *
 * A Function URL event is acknowledged by {@link acknowledgeInteraction} (200, empty body, within
 * Slack's 3 s); the slow part arrives back here as `{ slackFollowUp }` through an async
 * self-invocation and runs in {@link runFollowUp}.
 *
 * Environment: `TABLE_NAME`, `SLACK_SECRET_ARN` (or `SLACK_BOT_TOKEN` + `SLACK_SIGNING_SECRET`),
 * `AWS_LAMBDA_FUNCTION_NAME` (set by Lambda).
 *
 * @see https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html
 */
import { LambdaClient } from '@aws-sdk/client-lambda';
import middy from '@middy/core';
import * as z from 'zod';
import { createApprovalStore } from '#approval/approval-store.js';
import { createSlackApi, loadSlackSecrets, responseUrlPrefixesFromEnv } from '#approval/slack-client.js';
import { sfnClient } from '#platform/clients.js';
import { parseOrThrow, standardMiddleware } from '#platform/middleware.js';
import { lambdaDefer } from './defer.js';
import { acknowledgeInteraction, FollowUp, FunctionUrlRequest, runFollowUp } from './interaction.js';
import { createTaskCallbacks } from './task-callbacks.js';

const approvals = createApprovalStore();
const lambda = new LambdaClient({});
const now = () => Date.now();
const FollowUpEvent = z.object({ slackFollowUp: FollowUp });
const ackPorts = { approvals, now, allowedResponseUrlPrefixes: responseUrlPrefixesFromEnv() };

export const handler = middy()
  .use(standardMiddleware())
  .handler(async (event: unknown) => {
    const secrets = await loadSlackSecrets();
    if (event && typeof event === 'object' && 'slackFollowUp' in event) {
      const { slackFollowUp } = parseOrThrow(FollowUpEvent, event, 'follow-up event');
      const slack = createSlackApi({ token: secrets.botToken });
      return runFollowUp(slackFollowUp, {
        approvals,
        slack,
        callbacks: createTaskCallbacks(sfnClient()),
        now,
      });
    }
    const request = parseOrThrow(FunctionUrlRequest, event, 'Function URL event');
    const defer = lambdaDefer(lambda, process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'slack-interaction');
    return acknowledgeInteraction(request, { ...ackPorts, signingSecret: secrets.signingSecret, defer });
  });
