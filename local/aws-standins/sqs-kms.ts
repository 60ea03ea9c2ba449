/**
 * SQS as it behaves for a KMS-encrypted queue, in front of the `local-aws-sqs` stand-in (which
 * stores `KmsMasterKeyId` but never calls KMS): a proxy on the stand-in skeleton that forwards
 * every request and, for ReceiveMessage, SendMessage and SendMessageBatch on a queue with a
 * `KmsMasterKeyId`, first asks the KMS stand-in whether the caller may use that key. When it may
 * not, it answers what SQS answers: `KmsNotFound`, `KmsDisabled`, `KmsInvalidState` or
 * `KmsAccessDenied` (awsJson, with the legacy `KMS.*Exception` code in `x-amzn-query-error`).
 * `startLocalStack()` starts it unless told not to (`sqsEnforcesKms: false`) and points
 * `AWS_ENDPOINT_URL_SQS` here. The SQS stand-in behind it writes queue URLs with the proxy's port:
 * the SDK sends each call to its QueueUrl's host, so URLs of the stand-in's own port would bypass
 * the proxy.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-key-management.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html#API_ReceiveMessage_Errors
 */
import { once } from 'node:events';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KmsStandin } from './kms.js';
import { callerOf, hostStandin, type Standin } from './server.js';
import { createRequestHandler } from './sqs-indexed.js';

const USES_KEY = new Set(['ReceiveMessage', 'SendMessage', 'SendMessageBatch']);

/**
 * Starts the SQS stand-in (its own loopback port) and the proxy in front of it on `port`.
 * @param options.port - the proxy's port: the one queue URLs name.
 */
export async function startKmsEnforcingSqs(options: {
  port: number;
  /** Checks queue keys when given. */
  kms?: KmsStandin;
  region: string;
  accountId: string;
  /** Called right before the proxy listens on `port` (frees a placeholder that held the port). */
  beforeListen?: () => Promise<void>;
}): Promise<Standin> {
  const { requestHandler, service } = createRequestHandler({
    port: options.port,
    hostname: '127.0.0.1',
    region: options.region,
    accountId: options.accountId,
    emulateQueueCreationLifecycle: false,
  });
  const backend = createServer((req, res) => void requestHandler(req, res));
  backend.listen(0, '127.0.0.1');
  await once(backend, 'listening');
  const upstream = new URL(`http://127.0.0.1:${(backend.address() as AddressInfo).port}`);
  const keyOf = (queueUrl: unknown): string | undefined => {
    const name = String(queueUrl ?? '')
      .replace(/\/+$/, '')
      .split('/')
      .pop();
    const queues = (service as unknown as { Queues: Array<{ QueueName: string; KmsMasterKeyId?: string }> })
      .Queues;
    return queues.find((q) => q.QueueName === name)?.KmsMasterKeyId;
  };
  await options.beforeListen?.();
  return hostStandin(
    'SQS',
    (req, res, { calls }) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
        if (options.kms && USES_KEY.has(operation)) {
          let queueUrl: unknown;
          try {
            queueUrl = (JSON.parse(body.toString('utf8') || '{}') as { QueueUrl?: string }).QueueUrl;
          } catch {
            queueUrl = undefined;
          }
          const keyId = keyOf(queueUrl);
          const refusal = keyId ? options.kms.useError(keyId, callerOf(req).accessKeyId) : undefined;
          if (refusal) {
            calls.push({
              operation,
              input: { QueueUrl: queueUrl },
              accessKeyId: callerOf(req).accessKeyId,
              error: refusal.sqsError,
            });
            const text = JSON.stringify({
              __type: `com.amazonaws.sqs#${refusal.sqsError}`,
              message: refusal.message,
            });
            res.writeHead(400, {
              'content-type': 'application/x-amz-json-1.0',
              'x-amzn-query-error': `${refusal.queryCode};Sender`,
              'content-length': String(Buffer.byteLength(text)),
            });
            res.end(text);
            return;
          }
        }
        const forward = httpRequest(
          {
            host: upstream.hostname,
            port: upstream.port,
            path: req.url,
            method: req.method,
            headers: req.headers,
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 500, answer.headers);
            answer.pipe(res);
          },
        );
        forward.on('error', (error) => {
          res.writeHead(502);
          res.end(String(error));
        });
        forward.end(body);
      });
    },
    {
      port: options.port,
      onClose: async () => {
        backend.closeAllConnections();
        await new Promise<void>((resolve) => backend.close(() => resolve()));
      },
    },
  );
}
