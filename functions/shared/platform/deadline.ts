/**
 * The invocation's deadline (issue 8 item 7): every Slack, SQS and DynamoDB call inside a Task
 * must end before the Lambda does, so a hung or throttled dependency surfaces as
 * `Redrive.Transient` (which the state's Retry runs again in a fresh invocation) instead of an
 * uncatchable `Sandbox.Timedout` with the step half done.
 *
 * {@link invocationDeadline} (in `standardMiddleware`) records `now + getRemainingTimeInMillis() -
 * reserve` when an invocation starts and clears it when it ends; {@link timeLeftMs} is what is left
 * of it for one call (Infinity outside a Lambda invocation: tests, the CLI). Lambda runs one
 * invocation at a time per execution environment, so one module-level value is enough there.
 * {@link boundByDeadline} makes an SDK client abort any call still running at the deadline.
 *
 * @see https://docs.aws.amazon.com/lambda/latest/dg/nodejs-context.html
 * @see https://docs.aws.amazon.com/sdk-for-javascript/v3/developer-guide/abort-requests.html
 */
import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { TransientError } from './errors.js';

/** Time kept back from the Lambda's remaining time for the handler to finish and answer, ms. */
export const DEADLINE_RESERVE_MS = 2000;

let deadlineAt: number | undefined;

/** Sets (epoch milliseconds) or clears the deadline of the running invocation. */
export function setInvocationDeadline(at: number | undefined): void {
  deadlineAt = at;
}

/** Milliseconds left before the invocation's deadline (never below 0); Infinity when none is set. */
export function timeLeftMs(now: number = Date.now()): number {
  return deadlineAt === undefined ? Number.POSITIVE_INFINITY : Math.max(0, deadlineAt - now);
}

/** A middy middleware that sets the deadline from the Lambda context and clears it afterwards. */
export function invocationDeadline(
  reserveMs: number = DEADLINE_RESERVE_MS,
): MiddlewareObj<unknown, unknown, Error, Context> {
  const clear = async () => setInvocationDeadline(undefined);
  return {
    before: async (request) => {
      const remaining = request.context?.getRemainingTimeInMillis?.();
      setInvocationDeadline(
        typeof remaining === 'number' && Number.isFinite(remaining)
          ? Date.now() + Math.max(0, remaining - reserveMs)
          : undefined,
      );
    },
    after: clear,
    onError: clear,
  };
}

/** What {@link boundByDeadline} needs of a client: the SDK's `send(command, options)`. */
interface Sends {
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's overloaded send, wrapped generically.
  send: (command: any, options?: any) => Promise<any>;
}

/**
 * Makes every `send` of an SDK v3 client abort at the invocation's deadline (an `abortSignal` the
 * caller did not set itself), and turns that abort into `TransientError` naming the command. A call
 * started with no time left fails at once the same way. Outside an invocation nothing changes.
 *
 * @returns the same client.
 */
export function boundByDeadline<C extends Sends>(client: C): C {
  const send = client.send.bind(client);
  client.send = (command: { constructor: { name: string } }, options?: { abortSignal?: unknown }) => {
    const left = timeLeftMs();
    if (!Number.isFinite(left) || options?.abortSignal) return send(command, options);
    const name = command.constructor.name;
    if (left <= 0)
      return Promise.reject(new TransientError(`${name}: no time left in this invocation to make the call`));
    const signal = AbortSignal.timeout(left);
    return send(command, { ...options, abortSignal: signal }).catch((error: unknown) => {
      if (signal.aborted)
        throw new TransientError(
          `${name} did not answer within the ${left} ms left in this invocation`,
          error,
        );
      throw error;
    });
  };
  return client;
}
