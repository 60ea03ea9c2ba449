/**
 * Slack request signing (version `v0`): verify that an interaction request came from Slack, over
 * the EXACT bytes received, before anything else reads the body.
 *
 * `x-slack-signature = 'v0=' + hex(HMAC-SHA256(signingSecret, 'v0:' + x-slack-request-timestamp + ':' + rawBody))`.
 * Hashing a re-serialised or URL-decoded body never matches (a `*` in the message text
 * is `%2A` on the wire); a Function URL or API Gateway event may carry the body base64-encoded
 * (`isBase64Encoded`), which {@link rawBodyOf} undoes to the same bytes.
 *
 * @see https://api.slack.com/authentication/verifying-requests-from-slack
 * @see https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html#urls-payloads
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack's replay window: requests whose signed timestamp is older than this are refused. */
export const SLACK_TIMESTAMP_TOLERANCE_SECONDS = 300;

/** Why a request failed verification (the handler answers 401 for every one of them). */
export type SignatureFailure =
  | 'missing-timestamp'
  | 'missing-signature'
  | 'malformed-timestamp'
  | 'stale-timestamp'
  | 'malformed-signature'
  | 'signature-mismatch';

/** The outcome of {@link verifySlackSignature}: data, not a throw, so the caller maps it to a 401. */
export type SignatureVerdict = { ok: true } | { ok: false; reason: SignatureFailure };

/** Inputs of {@link verifySlackSignature}. */
export interface VerifySlackSignatureInput {
  /** The request body exactly as received on the wire (after undoing transport base64 only). */
  rawBody: Uint8Array;
  /** `x-slack-request-timestamp`, epoch seconds as text. */
  timestamp: string | undefined;
  /** `x-slack-signature`, `v0=<64 hex>`. */
  signature: string | undefined;
  signingSecret: string;
  /** The current time, epoch seconds (injected: never read from the system clock here). */
  nowSeconds: number;
  /** Replay window, seconds. @default 300 */
  toleranceSeconds?: number;
}

/**
 * Computes the `v0=` signature Slack would send for `rawBody` at `timestamp`.
 * Used by verification, by the local approver (which signs its own clicks) and by tests.
 *
 * @param signingSecret - the Slack app's signing secret.
 * @param timestamp - epoch seconds, as sent in `x-slack-request-timestamp`.
 * @param rawBody - the exact body bytes (a string is taken as UTF-8).
 * @returns `v0=` followed by 64 lowercase hex characters.
 * @see https://api.slack.com/authentication/verifying-requests-from-slack
 */
export function signSlackRequest(
  signingSecret: string,
  timestamp: string | number,
  rawBody: Uint8Array | string,
): string {
  const hmac = createHmac('sha256', signingSecret);
  hmac.update(`v0:${timestamp}:`);
  hmac.update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody);
  return `v0=${hmac.digest('hex')}`;
}

/**
 * Verifies a Slack request signature with a constant-time comparison and the 5-minute replay
 * window. Pure: reads nothing but its input.
 *
 * A timestamp in the future by more than the window is refused as well (clock skew that large
 * is indistinguishable from a forged timestamp).
 *
 * @returns `{ ok: true }`, or `{ ok: false, reason }` naming the failed check.
 * @see https://api.slack.com/authentication/verifying-requests-from-slack
 */
export function verifySlackSignature(input: VerifySlackSignatureInput): SignatureVerdict {
  const tolerance = input.toleranceSeconds ?? SLACK_TIMESTAMP_TOLERANCE_SECONDS;
  if (input.timestamp === undefined || input.timestamp === '') return fail('missing-timestamp');
  if (input.signature === undefined || input.signature === '') return fail('missing-signature');
  if (!/^\d{1,12}$/.test(input.timestamp)) return fail('malformed-timestamp');
  const age = input.nowSeconds - Number(input.timestamp);
  if (Math.abs(age) > tolerance) return fail('stale-timestamp');
  if (!/^v0=[0-9a-f]{64}$/.test(input.signature)) return fail('malformed-signature');

  const expected = Buffer.from(signSlackRequest(input.signingSecret, input.timestamp, input.rawBody), 'utf8');
  const given = Buffer.from(input.signature, 'utf8');
  // Both are 67 ASCII bytes here (checked by the regex), as timingSafeEqual requires.
  return timingSafeEqual(expected, given) ? { ok: true } : fail('signature-mismatch');
}

function fail(reason: SignatureFailure): SignatureVerdict {
  return { ok: false, reason };
}

/**
 * The raw body bytes of a Lambda Function URL / API Gateway HTTP API (payload 2.0) event:
 * base64-decoded when `isBase64Encoded` is true, else the UTF-8 bytes of `body`.
 *
 * @see https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html#urls-payloads
 */
export function rawBodyOf(event: {
  body?: string | undefined;
  isBase64Encoded?: boolean | undefined;
}): Buffer {
  const body = event.body ?? '';
  return event.isBase64Encoded ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
}

/**
 * Reads one header case-insensitively (Function URLs lower-case header names; other callers may not).
 */
export function headerOf(
  headers: Record<string, string | undefined> | undefined,
  name: string,
): string | undefined {
  if (!headers) return undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted) return value;
  }
  return undefined;
}
