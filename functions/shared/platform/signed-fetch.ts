/**
 * AWS requests signed with the SDK's own SigV4 signer (`@smithy/signature-v4`, the one every
 * client uses) and sent with Node's `fetch`: the calls whose SDK client does not fit a 500 KB
 * bundle (docs/bundles.md: S3 HeadObject, Lambda Invoke, IAM SimulatePrincipalPolicy). The hash
 * is the SDK's too (`Sha256` of `@smithy/core/checksum`, node:crypto underneath, already in every
 * bundle through the clients' runtime config), so the signature is computed as a client's would be.
 *
 * What this does not do: retries, redirects (the caller decides, `redirect: 'manual'` for S3),
 * response parsing (each caller reads its service's protocol).
 *
 * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html
 */
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider, Provider } from '@smithy/types';
import { TransientError } from './errors.js';

/** Options of {@link awsSigner}. */
export interface AwsSignerOptions {
  /** The signing name: `s3`, `lambda`, `iam`. */
  service: string;
  /** The signing Region (`us-east-1` for IAM in the `aws` partition). */
  region: string;
  credentials: AwsCredentialIdentityProvider | Provider<AwsCredentialIdentity>;
  /** Escape the path once more for the canonical request (every service but S3). @default true */
  uriEscapePath?: boolean;
  /** Sign the payload hash as `x-amz-content-sha256` (S3). @default false */
  applyChecksum?: boolean;
}

/** A SigV4 signer for one service and Region. */
export function awsSigner(options: AwsSignerOptions): SignatureV4 {
  return new SignatureV4({ ...options, sha256: Sha256 });
}

/** One request of {@link signedFetch}. */
export interface SignedRequest {
  method: 'GET' | 'HEAD' | 'POST';
  /** Path and query already encoded as the service wants them on the wire. */
  url: URL;
  /** Headers besides `host` and the signature's own. */
  headers?: Record<string, string>;
  body?: string;
  /** @default 'follow' */
  redirect?: RequestInit['redirect'];
  /** Milliseconds before the request is abandoned. @default no limit */
  timeoutMs?: number;
}

/**
 * Signs `request` with `signer` and sends it.
 *
 * @param action - what the request is, for the error (`s3:HeadObject s3://bucket/key`).
 * @returns the response, whatever its status (the caller reads its service's errors).
 * @throws TransientError naming `action` when the endpoint cannot be reached or does not answer
 *   within `timeoutMs`.
 */
export async function signedFetch(
  signer: SignatureV4,
  request: SignedRequest,
  action: string,
): Promise<Response> {
  const { url } = request;
  const signed = await signer.sign({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: { ...request.headers, host: url.host },
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  try {
    return await fetch(url, {
      method: request.method,
      headers: signed.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      ...(request.redirect ? { redirect: request.redirect } : {}),
      ...(request.timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(request.timeoutMs) }),
    });
  } catch (error) {
    throw new TransientError(`${action}: ${(error as Error).message}`, error);
  }
}
