/**
 * Local S3: the maintained `s3rver` package (the S3 REST/XML API on the file system, a temporary
 * directory removed on close), behind the stand-in skeleton's call record and fault injection, so
 * tests can assert what the pipeline asked of S3 (HeadObject, never DeleteObject).
 *
 * The real S3 client reaches it through `AWS_ENDPOINT_URL_S3`. The endpoint is an IP address
 * (`http://127.0.0.1:<port>`), for which the SDK's S3 endpoint rules use path-style addressing
 * (`/<bucket>/<key>`) by themselves: no `forcePathStyle` switch in the pipeline's code.
 *
 * @see https://www.npmjs.com/package/s3rver
 * @see https://docs.aws.amazon.com/AmazonS3/latest/userguide/VirtualHosting.html#path-style-access
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { callerOf, hostStandin, type Standin } from './server.js';

/** The S3 operation a REST request is (enough to tell HeadObject, GetObject, PutObject, DeleteObject...). */
function operationOf(method: string, path: string, query: URLSearchParams): string {
  const [, bucket = '', ...rest] = path.split('/');
  const hasKey = rest.join('/') !== '';
  if (!bucket) return 'ListBuckets';
  if (query.has('delete')) return 'DeleteObjects';
  const noun = hasKey ? 'Object' : 'Bucket';
  const verb = {
    HEAD: 'Head',
    GET: hasKey ? 'Get' : 'ListObjects',
    PUT: hasKey ? 'Put' : 'Create',
    DELETE: 'Delete',
    POST: 'Post',
  }[method];
  return verb === 'ListObjects' ? 'ListObjects' : `${verb ?? method}${noun}`;
}

/** Starts local S3 on a free loopback port; point the SDK at it with `AWS_ENDPOINT_URL_S3`. */
export async function startS3Standin(): Promise<Standin> {
  const directory = mkdtempSync(join(tmpdir(), 'dlq-redrive-s3-'));
  const s3 = new S3rver({ directory, silent: true, resetOnClose: true, allowMismatchedSignatures: true });
  const handle = s3.callback();
  return hostStandin(
    'S3',
    (request, response, { calls, takeFault }) => {
      const path = decodeURIComponent(new URL(request.url ?? '/', 'http://localhost').pathname);
      const query = new URL(request.url ?? '/', 'http://localhost').searchParams;
      const operation = operationOf(request.method ?? 'GET', path, query);
      const [, bucket = '', ...key] = path.split('/');
      const call = {
        operation,
        input: { Bucket: bucket, Key: key.join('/') },
        accessKeyId: callerOf(request).accessKeyId,
      };
      const fault = takeFault(operation);
      if (fault) {
        calls.push({ ...call, error: fault.code });
        response.writeHead(fault.status, { 'content-type': 'application/xml' });
        response.end(
          request.method === 'HEAD'
            ? undefined
            : `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${fault.code}</Code><Message>${fault.message}</Message></Error>`,
        );
        return;
      }
      response.on('finish', () => {
        calls.push({
          ...call,
          ...(response.statusCode >= 400 ? { error: String(response.statusCode) } : {}),
        });
      });
      // s3rver knows one access key (S3RVER); the local stack signs with its own dummy one. The
      // caller is recorded above; s3rver serves the request unsigned.
      delete request.headers.authorization;
      handle(request, response);
    },
    { onClose: () => rmSync(directory, { recursive: true, force: true }) },
  );
}
