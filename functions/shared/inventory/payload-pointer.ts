/**
 * Extended-client messages: a body that is a pointer to an S3 object holding the real payload,
 * as the Amazon SQS Extended Client Library writes it (Java v2 / payload-offloading common lib,
 * Java v1, Python), recognised without reading the object.
 *
 * The forms (every combination occurs across library versions and ports):
 * - body `["software.amazon.payloadoffloading.PayloadS3Pointer", {"s3BucketName": "...", "s3Key": "..."}]`
 *   (Java v2 and the Python library) or the same array with the class
 *   `com.amazon.sqs.javamessaging.MessageS3Pointer` (Java v1);
 * - the reserved message attribute `ExtendedPayloadSize`, or the legacy `SQSLargePayloadSize`,
 *   holding the payload's size in bytes.
 * The body shape decides; the attribute gives the size (null without it).
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-s3-messages.html
 * @see https://github.com/awslabs/amazon-sqs-java-extended-client-lib
 * @see https://github.com/awslabs/amazon-sqs-python-extended-client-lib
 */
import type { PayloadPointer, StoredMessageAttribute } from './model.js';

/** The pointer classes of the extended clients' body. */
export const POINTER_CLASSES = [
  'software.amazon.payloadoffloading.PayloadS3Pointer',
  'com.amazon.sqs.javamessaging.MessageS3Pointer',
] as const;

/** The reserved attributes holding the payload size, current first. */
export const PAYLOAD_SIZE_ATTRIBUTES = ['ExtendedPayloadSize', 'SQSLargePayloadSize'] as const;

/**
 * The S3 pointer of an extended-client body, or undefined for any other body.
 *
 * @param body - the message body as received.
 * @param attributes - the message attributes (for the payload size).
 */
export function parsePayloadPointer(
  body: string,
  attributes: Readonly<Record<string, StoredMessageAttribute>>,
): PayloadPointer | undefined {
  const text = body.trimStart();
  if (!text.startsWith('[')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) return undefined;
  const [pointerClass, target] = parsed as [unknown, unknown];
  if (!(POINTER_CLASSES as readonly unknown[]).includes(pointerClass)) return undefined;
  const { s3BucketName: bucket, s3Key: key } = (target ?? {}) as { s3BucketName?: unknown; s3Key?: unknown };
  if (typeof bucket !== 'string' || bucket === '' || typeof key !== 'string' || key === '') return undefined;
  const sizeText = PAYLOAD_SIZE_ATTRIBUTES.map((name) => attributes[name]?.stringValue).find(
    (v) => v !== undefined,
  );
  const size = sizeText !== undefined && /^\d+$/.test(sizeText) ? Number(sizeText) : null;
  return { bucket, key, sizeBytes: size, pointerClass: pointerClass as PayloadPointer['pointerClass'] };
}

/** `s3://bucket/key`. */
export const payloadUri = (p: Pick<PayloadPointer, 'bucket' | 'key'>) => `s3://${p.bucket}/${p.key}`;

/** The reason a message whose payload object is gone stays out of the sample and the bulk move. */
export function payloadGoneReason(pointer: Pick<PayloadPointer, 'bucket' | 'key'>): string {
  return `extended-client payload ${payloadUri(pointer)} is gone (HeadObject 404): a redriven pointer would fail its consumer`;
}
