import { describe, expect, it } from 'vitest';
import { parsePayloadPointer } from '#inventory/payload-pointer.js';

const size = (name: string, value: string) => ({ [name]: { dataType: 'Number', stringValue: value } });
const V2 = 'software.amazon.payloadoffloading.PayloadS3Pointer';

describe('parsePayloadPointer', () => {
  it('reads bucket and key from the body and the size from ExtendedPayloadSize before the legacy SQSLargePayloadSize', () => {
    const body = JSON.stringify([V2, { s3BucketName: 'b', s3Key: 'k/1' }]);
    expect(
      parsePayloadPointer(body, { ...size('SQSLargePayloadSize', '7'), ...size('ExtendedPayloadSize', '9') }),
    ).toEqual({
      bucket: 'b',
      key: 'k/1',
      sizeBytes: 9,
      pointerClass: V2,
    });
    expect(parsePayloadPointer(body, {})?.sizeBytes).toBeNull();
    expect(parsePayloadPointer(body, size('ExtendedPayloadSize', 'lots'))?.sizeBytes).toBeNull();
  });

  it('is not fooled by bodies that only look like a pointer', () => {
    for (const body of [
      JSON.stringify(['com.example.MyPointer', { s3BucketName: 'b', s3Key: 'k' }]),
      JSON.stringify([V2, { s3BucketName: 'b' }]),
      JSON.stringify([V2, { s3BucketName: '', s3Key: 'k' }]),
      JSON.stringify([V2, { s3BucketName: 'b', s3Key: 'k' }, 'extra']),
      JSON.stringify({ s3BucketName: 'b', s3Key: 'k' }),
      `[${JSON.stringify(V2)}, {"s3BucketName": "b"`,
      'plain text',
    ])
      expect(parsePayloadPointer(body, size('ExtendedPayloadSize', '10')), body).toBeUndefined();
  });
});
