/**
 * Whether the S3 objects extended-client messages point to still exist: one HeadObject per
 * pointer, in Preflight and in the recheck right before Park (the workflow's last step before
 * anything moves). A gone object is marked on its envelope (`payloadGoneAt`), which Park
 * (`parkReason`) and SampleRedrive read: only this function bundles the S3 client (160 KB). The
 * pipeline never reads an object's content and never deletes one.
 *
 * HeadObject is authorised as `s3:GetObject`; without `s3:ListBucket` on the bucket S3 answers a
 * missing object with 403, not 404, so gone could not be told from denied. The stack grants both
 * on registered payload buckets (MonitoredDlq `payloadBuckets`); a 403 is reported as `denied`,
 * never as gone.
 *
 * @see https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html
 */
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { PayloadPointer } from '#inventory/model.js';
import { payloadUri } from '#inventory/payload-pointer.js';
import { awsErrorName, isRetryable, TransientError } from '#platform/errors.js';

/** What S3 says about a pointer's object. */
export type PayloadObjectState = 'present' | 'gone' | 'denied';

/** The S3 port. */
export interface PayloadObjects {
  /** HeadObject. @throws TransientError on throttling/5xx. */
  state(pointer: Pick<PayloadPointer, 'bucket' | 'key'>): Promise<PayloadObjectState>;
}

/** Creates the port over the shared (or given) S3 client. */
export function createPayloadObjects(client: S3Client): PayloadObjects {
  return {
    async state(pointer) {
      try {
        await client.send(new HeadObjectCommand({ Bucket: pointer.bucket, Key: pointer.key }));
        return 'present';
      } catch (error) {
        const name = awsErrorName(error);
        const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        if (name === 'NotFound' || name === 'NoSuchKey' || name === 'NoSuchBucket' || status === 404)
          return 'gone';
        if (name === 'Forbidden' || name === 'AccessDenied' || status === 403) return 'denied';
        if (isRetryable(error))
          throw new TransientError(`HeadObject ${payloadUri(pointer)}: ${(error as Error).message}`, error);
        throw error;
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
