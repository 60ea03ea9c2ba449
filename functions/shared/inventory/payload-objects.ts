/**
 * Whether the S3 objects extended-client messages point to still exist: one HeadObject per
 * pointer, in Preflight and in the recheck right before Park (the workflow's last step before
 * anything moves). A gone object is marked on its envelope (`payloadGoneAt`), which Park
 * (`parkReason`) and SampleRedrive read. The pipeline never reads an object's content and never
 * deletes one.
 *
 * HeadObject through `@aws-sdk/client-s3`, loaded on first use (platform/clients.ts `s3Client`): most
 * DLQs have no extended-client messages, so the S3 package stays off the cold path. HeadObject
 * needs no more than the status: 200 present, 404 gone, 403 denied; a bucket in another Region is
 * asked again there by the client (`followRegionRedirects`). HeadObject is authorised as
 * `s3:GetObject`; without `s3:ListBucket` on the bucket S3 answers a missing object with 403, not
 * 404, so gone could not be told from denied. The stack grants both on registered payload buckets
 * (MonitoredDlq `payloadBuckets`); a 403 is reported as `denied`, never as gone.
 *
 * @see https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html
 * @see https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { TransientError } from '#platform/errors.js';
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

/** What an SDK error carries that the state reads. */
interface SdkError {
  name: string;
  $retryable?: unknown;
  $metadata?: { httpStatusCode?: number };
}

/**
 * Creates the port over the S3 client `s3()` resolves to.
 *
 * @param s3 - loads (once) and returns the client (clients.ts `s3Client`).
 */
export function createPayloadObjects(s3: () => Promise<Pick<S3Client, 'send'>>): PayloadObjects {
  return {
    async state(pointer) {
      const [client, { HeadObjectCommand }] = await Promise.all([s3(), import('#platform/lazy-s3.js')]);
      try {
        await client.send(new HeadObjectCommand({ Bucket: pointer.bucket, Key: pointer.key }));
        return 'present';
      } catch (error) {
        if (error instanceof TransientError) throw error;
        const e = error as SdkError;
        const status = e.$metadata?.httpStatusCode;
        if (status === 404) return 'gone';
        if (status === 403) return 'denied';
        const text = `HeadObject ${payloadUri(pointer)}: ${status === undefined ? e.name : `HTTP ${status}`}`;
        if (status === undefined || status === 429 || status >= 500 || e.$retryable)
          throw new TransientError(text, error);
        throw new Error(text, { cause: error });
      }
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
