/**
 * Lambda `Invoke` with `InvocationType: Event` (an asynchronous invocation), signed with the SDK's
 * own SigV4 signer and sent with Node's `fetch` (signed-fetch.ts): the one Lambda call the
 * recording mover makes. Not `@aws-sdk/client-lambda`: that client registers every Lambda error
 * and operation schema at import (about 80 KB minified that no tree-shaking removes), which took
 * the mover's bundle past the 500 KB every function is held to. The request is the SDK's own
 * (restJson1: `POST /2015-03-31/functions/{FunctionName}/invocations`, header
 * `X-Amz-Invocation-Type: Event`), so any endpoint that answers the SDK client answers it too, and the IAM action is the same `lambda:InvokeFunction`.
 *
 * @see https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html
 * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html
 */
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { TransientError } from './errors.js';
import { awsSigner, signedFetch } from './signed-fetch.js';

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

/** Options of {@link createLambdaInvoker}. */
export interface LambdaInvokerOptions {
  region: string;
  credentials: AwsCredentialIdentityProvider;
  /** @default `https://lambda.<region>.amazonaws.com` */
  endpoint?: string | undefined;
}

/** Creates an invoker for one account and Region. */
export function createLambdaInvoker(options: LambdaInvokerOptions): LambdaInvoker {
  const signer = awsSigner({ service: 'lambda', region: options.region, credentials: options.credentials });
  const base = new URL(options.endpoint ?? `https://lambda.${options.region}.amazonaws.com`);
  return {
    async invokeAsync(functionArn, payload) {
      const path = `${base.pathname.replace(/\/$/, '')}/2015-03-31/functions/${encodeURIComponent(functionArn)}/invocations`;
      const response = await signedFetch(
        signer,
        {
          method: 'POST',
          url: new URL(`${base.protocol}//${base.host}${path}`),
          headers: { 'content-type': 'application/octet-stream', 'x-amz-invocation-type': 'Event' },
          body: payload,
        },
        `lambda:InvokeFunction ${functionArn}`,
      );
      const requestId = response.headers.get('x-amzn-requestid');
      const text = await response.text();
      if (response.status === 202) return { ok: true, requestId };
      let body: { Type?: string; __type?: string; message?: string; Message?: string } = {};
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        // not JSON: keep the text as the message
      }
      const code = (
        response.headers.get('x-amzn-errortype') ??
        body.__type ??
        body.Type ??
        `HTTP${response.status}`
      ).split(':')[0] as string;
      const message = body.message ?? body.Message ?? text.slice(0, 500);
      if (response.status === 429 || response.status >= 500)
        throw new TransientError(`lambda:InvokeFunction ${functionArn}: ${code} ${message}`);
      return { ok: false, code, message };
    },
  };
}
