import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPayloadObjects } from '#inventory/payload-objects.js';

describe('createPayloadObjects over HTTP', () => {
  const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders }> = [];
  // The answers a real S3 gives HeadObject: by key.
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const region = /Credential=[^/]+\/\d{8}\/([^/]+)\/s3\//.exec(req.headers.authorization ?? '')?.[1];
    if (req.url?.endsWith('/moved') && region !== 'eu-central-1') {
      res.writeHead(301, { 'x-amz-bucket-region': 'eu-central-1' }).end();
      return;
    }
    const status = { present: 200, moved: 200, gone: 404, denied: 403, slow: 503, odd: 409 }[
      req.url?.split('/').pop() ?? ''
    ];
    res.writeHead(status ?? 500).end();
  });
  let objects: ReturnType<typeof createPayloadObjects>;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new S3Client({
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      forcePathStyle: true,
      followRegionRedirects: true,
      maxAttempts: 1,
      credentials: async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }),
    });
    objects = createPayloadObjects(async () => client);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends a SigV4-signed HEAD and reads present, gone and denied from the status', async () => {
    expect(await objects.state({ bucket: 'b', key: 'present' })).toBe('present');
    expect(await objects.state({ bucket: 'b', key: 'gone' })).toBe('gone');
    expect(await objects.state({ bucket: 'b', key: 'denied' })).toBe('denied');
    const first = seen[0];
    expect(first?.method).toBe('HEAD');
    expect(first?.url).toBe('/b/present');
    expect(first?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/s3\/aws4_request, SignedHeaders=[^,]*host[^,]*, Signature=[0-9a-f]{64}$/,
    );
    expect(first?.headers['x-amz-content-sha256']).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
  });

  it('asks again in the Region S3 names for a bucket elsewhere, once', async () => {
    seen.splice(0);
    expect(await objects.state({ bucket: 'b', key: 'moved' })).toBe('present');
    expect(seen.map((s) => /\/\d{8}\/([^/]+)\//.exec(s.headers.authorization ?? '')?.[1])).toEqual([
      'us-east-1',
      'eu-central-1',
    ]);
  });

  it('throws a retryable error on 503 and a plain one naming the object and status on anything else', async () => {
    await expect(objects.state({ bucket: 'b', key: 'slow' })).rejects.toMatchObject({
      name: 'Redrive.Transient',
      message: 'HeadObject s3://b/slow: HTTP 503',
    });
    await expect(objects.state({ bucket: 'b', key: 'odd' })).rejects.toThrow(
      'HeadObject s3://b/odd: HTTP 409',
    );
  });
});
