/**
 * RequestApproval (`arn:aws:states:::lambda:invoke.waitForTaskToken`): `{ plan, preflight,
 * taskToken }` in; posts the Slack approval request once per task token. The Task's output comes
 * later, from the Slack interaction's `SendTaskSuccess`.
 *
 * Environment: `TABLE_NAME`, `SLACK_SECRET_ARN` (or `SLACK_BOT_TOKEN`), `SLACK_DEFAULT_CHANNEL`
 * (optional), `APPROVAL_TIMEOUT_SECONDS` (optional; the state's TimeoutSeconds, default 3600).
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/connect-to-resource.html#connect-wait-token
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { standardMiddleware } from '#platform/middleware.js';
import { createRequestApprovalDeps } from './deps.js';
import { RequestApprovalInput, requestApproval } from './request-approval.js';

export const handler = middy()
  .use(standardMiddleware())
  .use(parser({ schema: RequestApprovalInput }))
  .handler(async (input: RequestApprovalInput) => requestApproval(input, await createRequestApprovalDeps()));
