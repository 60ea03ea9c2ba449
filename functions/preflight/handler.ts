/**
 * Preflight (states `Preflight` and `CheckDlqStillHasMessages`): `{ action, plan, executionName? }` in, the
 * preflight slot out. Refusals are data (`ok: false`); only AWS failures throw.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListMessageMoveTasks.html
 */
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import { standardMiddleware } from '#platform/middleware.js';
import { createPreflightDeps } from './deps.js';
import { PreflightInput, type PreflightResult, preflight } from './preflight.js';

/** The Lambda handler. */
export const handler = middy<PreflightInput, PreflightResult>()
  .use(standardMiddleware())
  .use(parser({ schema: PreflightInput }))
  .handler((input, context) => preflight(input, createPreflightDeps(context)));
