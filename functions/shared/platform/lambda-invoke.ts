/**
 * Lambda `Invoke` with `InvocationType: Event` (an asynchronous invocation) through
 * `@aws-sdk/client-lambda`: the one path every asynchronous invocation takes (the recording
 * mover's Lambda targets, the Slack interaction's self-invocation). The client is passed as a
 * loader (clients.ts `lambdaClient`, or a scoped client of another account), so its package is
 * loaded on the first invocation, not at import.
 *
 * @see https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html
 * @see https://docs.aws.amazon.com/lambda/latest/dg/invocation-async.html
 */
import type { LambdaClient } from '@aws-sdk/client-lambda';
import { TransientError } from './errors.js';

/** What Lambda answered to one asynchronous invocation. */
export type InvokeOutcome =
  | { ok: true; requestId: string | null }
  | { ok: false; code: string; message: string };

/** Asynchronous invocations of one account and Region. */
export interface LambdaInvoker {
  /**
   * Queues `payload` (JSON text) for an asynchronous invocation of `functionArn`.
   * @returns `ok` on 202 Accepted, else the error type Lambda named and its message.
   * @throws TransientError on throttling (429) or a 5xx, and when Lambda cannot be reached.
   */
  invokeAsync(functionArn: string, payload: string): Promise<InvokeOutcome>;
}

/** What an SDK error carries that the outcome reads. */
interface SdkError {
  name: string;
  message: string;
  $retryable?: unknown;
  $metadata?: { httpStatusCode?: number };
}

/**
 * Creates an invoker over the client `client()` resolves to.
 *
 * @param client - loads (once) and returns the Lambda client of the target's account and Region.
 */
export function createLambdaInvoker(client: () => Promise<LambdaClient>): LambdaInvoker {
  return {
    async invokeAsync(functionArn, payload) {
      const [lambda, { InvokeCommand }] = await Promise.all([client(), import('./lazy-lambda.js')]);
      try {
        const out = await lambda.send(
          new InvokeCommand({
            FunctionName: functionArn,
            InvocationType: 'Event',
            Payload: new TextEncoder().encode(payload),
          }),
        );
        if (out.StatusCode === 202) return { ok: true, requestId: out.$metadata.requestId ?? null };
        return {
          ok: false,
          code: `HTTP${out.StatusCode}`,
          message: 'not accepted for asynchronous invocation',
        };
      } catch (error) {
        if (error instanceof TransientError) throw error;
        const e = error as SdkError;
        const status = e.$metadata?.httpStatusCode;
        if (status === undefined || status === 429 || status >= 500 || e.$retryable)
          throw new TransientError(`lambda:InvokeFunction ${functionArn}: ${e.name} ${e.message}`, error);
        return { ok: false, code: e.name, message: e.message };
      }
    },
  };
}
