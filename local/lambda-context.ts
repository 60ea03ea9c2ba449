/**
 * A Lambda-like invocation context for running real handlers in-process (local runner, demo).
 *
 * Powertools' `injectLambdaContext` and any code that budgets its work with
 * `getRemainingTimeInMillis()` see the same fields the Lambda runtime provides.
 *
 * @see https://docs.aws.amazon.com/lambda/latest/dg/nodejs-context.html
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

/** Options of {@link lambdaContext}. */
export interface LambdaContextOptions {
  /** Function name, e.g. `SampleRedriveFunction`. */
  functionName: string;
  /** The function's timeout, milliseconds. @default 60000 */
  timeoutMs?: number;
  /** @default 'us-east-1' */
  region?: string;
  /** @default '123456789012' */
  accountId?: string;
  /** @default 1024 */
  memoryMb?: number;
}

/**
 * Builds a context for one invocation; the remaining time counts down from `timeoutMs` starting now.
 *
 * @param options - function name and timeout (milliseconds).
 * @returns an object shaped like the Node.js Lambda runtime's `context`.
 */
export function lambdaContext(options: LambdaContextOptions): Context {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const region = options.region ?? process.env.AWS_REGION ?? 'us-east-1';
  const accountId = options.accountId ?? '123456789012';
  const deadline = Date.now() + timeoutMs;
  const requestId = randomUUID();
  const unsupported = (): never => {
    throw new Error('callback-style completion is not supported: return a promise');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: options.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:${accountId}:function:${options.functionName}`,
    memoryLimitInMB: String(options.memoryMb ?? 1024),
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${options.functionName}`,
    logStreamName: `local/[$LATEST]${requestId.replaceAll('-', '')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}
