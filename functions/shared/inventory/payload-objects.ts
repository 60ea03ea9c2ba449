/**
 * Whether the S3 objects extended-client messages point to still exist: one HeadObject per
 * pointer, in Preflight and in the recheck right before Park (the workflow's last step before
 * anything moves). A gone object is marked on its envelope (`payloadGoneAt`), which Park
 * (`parkReason`) and SampleRedrive read. The pipeline never reads an object's content and never
 * deletes one.
 *
 * HeadObject is one signed HEAD request (platform/signed-fetch.ts: the SDK's own SigV4 signer;
 * credentials from the SDK's default chain), not `@aws-sdk/client-s3`: that client weighs 162 KB
 * minified (its middleware is not tree-shaken per command) and took preflight's bundle from about
 * 470 KB to 630 KB, over the 500 KB every function is held to. HeadObject needs no more than the
 * status: 200 present, 404 gone, 403 denied, 301/400 with `x-amz-bucket-region` the bucket is in
 * another Region (asked again there, once). HeadObject is authorised as `s3:GetObject`; without
 * `s3:ListBucket` on the bucket S3 answers a missing object with 403, not 404, so gone could not be
 * told from denied. The stack grants both on registered payload buckets (MonitoredDlq
 * `payloadBuckets`); a 403 is reported as `denied`, never as gone.
 *
 * Addressing: `AWS_ENDPOINT_URL_S3` (or `AWS_ENDPOINT_URL`, config `s3Endpoint`) path-style, as the SDK does for a
 * custom endpoint; otherwise virtual-hosted `https://<bucket>.s3.<region>.amazonaws.com/<key>`,
 * path-style for a bucket name with dots (its TLS name would not match the wildcard certificate).
 *
 * @see https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html
 * @see https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html
 * @see https://docs.aws.amazon.com/AmazonS3/latest/userguide/VirtualHosting.html
 */
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import type { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, Provider } from '@smithy/types';
import { TransientError } from '#platform/errors.js';
import { awsSigner, signedFetch } from '#platform/signed-fetch.js';
import type { EnvelopeStore } from './envelope-store.js';
import type { PayloadPointer } from './model.js';
import { payloadUri } from './payload-pointer.js';

/** What S3 says about a pointer's object. */
export type PayloadObjectState = 'present' | 'gone' | 'denied';

/** The S3 port. */
export interface PayloadObjects {
  /**
   * HeadObject.
   * @throws TransientError on throttling, 5xx, a timeout or a network error.
   * @throws Error naming the object and the status for any other answer.
   */
  state(pointer: Pick<PayloadPointer, 'bucket' | 'key'>): Promise<PayloadObjectState>;
}

/** Options of {@link createPayloadObjects}. */
export interface PayloadObjectsOptions {
  /** The function's Region (where a bucket is looked for first). */
  region: string;
  /** S3 endpoint, addressed path-style (config `s3Endpoint`). @default AWS's, virtual-hosted */
  endpoint?: string | null;
  /** @default the SDK's default credential chain */
  credentials?: Provider<AwsCredentialIdentity>;
  /** Per request, milliseconds. @default 10000 */
  timeoutMs?: number;
}

/** RFC 3986 encoding of one key segment, as SigV4 wants it (also `!'()*`). */
const encodeSegment = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The object's URL for a Region. */
export function objectUrl(
  pointer: Pick<PayloadPointer, 'bucket' | 'key'>,
  region: string,
  endpoint?: string,
): URL {
  const key = pointer.key.split('/').map(encodeSegment).join('/');
  if (endpoint) return new URL(`${endpoint.replace(/\/+$/, '')}/${encodeSegment(pointer.bucket)}/${key}`);
  return pointer.bucket.includes('.')
    ? new URL(`https://s3.${region}.amazonaws.com/${pointer.bucket}/${key}`)
    : new URL(`https://${pointer.bucket}.s3.${region}.amazonaws.com/${key}`);
}

/** Creates the port: signed HEAD requests over fetch. */
export function createPayloadObjects(options: PayloadObjectsOptions): PayloadObjects {
  const endpoint = options.endpoint ?? undefined;
  const credentials = options.credentials ?? defaultProvider();
  const timeoutMs = options.timeoutMs ?? 10_000;
  const signers = new Map<string, SignatureV4>();
  const signer = (region: string) => {
    let s = signers.get(region);
    if (!s) {
      s = awsSigner({ service: 's3', region, credentials, uriEscapePath: false, applyChecksum: true });
      signers.set(region, s);
    }
    return s;
  };

  const head = async (pointer: Pick<PayloadPointer, 'bucket' | 'key'>, region: string) => {
    const url = objectUrl(pointer, region, endpoint);
    return signedFetch(
      signer(region),
      { method: 'HEAD', url, redirect: 'manual', timeoutMs },
      `HeadObject ${payloadUri(pointer)}`,
    );
  };

  return {
    async state(pointer) {
      let response = await head(pointer, options.region);
      const bucketRegion = response.headers.get('x-amz-bucket-region');
      if (
        (response.status === 301 || response.status === 400) &&
        bucketRegion &&
        bucketRegion !== options.region
      )
        response = await head(pointer, bucketRegion);
      if (response.ok) return 'present';
      if (response.status === 404) return 'gone';
      if (response.status === 403) return 'denied';
      const text = `HeadObject ${payloadUri(pointer)}: HTTP ${response.status}`;
      if (response.status === 429 || response.status >= 500) throw new TransientError(text);
      throw new Error(text);
    },
  };
}

/**
 * The state of every distinct pointer, a few HeadObject calls at a time.
 * @param concurrency - calls in flight at once. @default 8
 */
export async function payloadStates(
  objects: PayloadObjects,
  pointers: ReadonlyArray<Pick<PayloadPointer, 'bucket' | 'key'>>,
  concurrency = 8,
): Promise<Map<string, PayloadObjectState>> {
  const unique = [...new Map(pointers.map((p) => [payloadUri(p), p])).values()];
  const states = new Map<string, PayloadObjectState>();
  let next = 0;
  const worker = async () => {
    while (next < unique.length) {
      const pointer = unique[next++] as Pick<PayloadPointer, 'bucket' | 'key'>;
      states.set(payloadUri(pointer), await objects.state(pointer));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, unique.length) }, worker));
  return states;
}

/** An IN_DLQ envelope with an extended-client pointer. */
export interface PointerEnvelope {
  messageId: string;
  payload: PayloadPointer;
  goneAt: string | undefined;
}

/**
 * Check 3a (Preflight, the recheck and the ramp's gate, through late-arrivals.ts): HeadObject of every pointer; a gone object is marked on its envelope (Park parks it,
 * SampleRedrive skips it), a mark whose object is back is cleared. A dry run (`mark` false)
 * reports the same and writes no mark.
 */
export async function checkPayloadPointers(
  dlqArn: string,
  pointers: readonly PointerEnvelope[],
  objects: PayloadObjects,
  envelopes: Pick<EnvelopeStore, 'markPayloadGone'>,
  nowMs: number,
  mark: boolean,
): Promise<{ gone: number; goneIds: string[]; warnings: string[]; refusal?: string }> {
  const states = await payloadStates(
    objects,
    pointers.map((p) => p.payload),
  );
  const stateOf = (p: PointerEnvelope) => states.get(payloadUri(p.payload));
  const denied = [...new Set(pointers.filter((p) => stateOf(p) === 'denied').map((p) => p.payload.bucket))];
  if (denied.length > 0)
    return {
      gone: 0,
      goneIds: [],
      warnings: [],
      refusal: `extended-client payloads in bucket(s) ${denied.join(', ')} cannot be checked (HeadObject 403): grant s3:GetObject and s3:ListBucket on them (MonitoredDlq payloadBuckets); without ListBucket S3 answers a gone object with 403 too`,
    };
  const now = new Date(nowMs).toISOString();
  const gone = pointers.filter((p) => stateOf(p) === 'gone');
  for (const p of mark ? pointers : []) {
    const state = stateOf(p);
    if (state === 'gone' && p.goneAt === undefined) await envelopes.markPayloadGone(dlqArn, p.messageId, now);
    if (state === 'present' && p.goneAt !== undefined)
      await envelopes.markPayloadGone(dlqArn, p.messageId, null);
  }
  if (gone.length === 0) return { gone: 0, goneIds: [], warnings: [] };
  const examples = gone
    .slice(0, 3)
    .map((p) => payloadUri(p.payload))
    .join(', ');
  return {
    gone: gone.length,
    goneIds: gone.map((p) => p.messageId),
    warnings: [
      `${gone.length} extended-client message(s) point to S3 objects that are gone (${examples}${gone.length > 3 ? ', ...' : ''}): they are held out of the sample and parked before the bulk move (a move task cannot skip messages; redriving a pointer to nothing only fails the consumer again)`,
    ],
  };
}
