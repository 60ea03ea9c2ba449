/**
 * SQS as it behaves for a KMS-encrypted queue, in front of the `local-aws-sqs` stand-in (which
 * stores `KmsMasterKeyId` but never calls KMS): a proxy on the stand-in skeleton that forwards
 * every request and, for ReceiveMessage, SendMessage and SendMessageBatch on a queue with a
 * `KmsMasterKeyId`, first asks the KMS stand-in whether the caller may use that key. When it may
 * not, it answers what SQS answers: `KmsNotFound`, `KmsDisabled`, `KmsInvalidState` or
 * `KmsAccessDenied` (awsJson, with the legacy `KMS.*Exception` code in `x-amzn-query-error`).
 * Started by `startLocalStack({ sqsEnforcesKms: true })`, which points `AWS_ENDPOINT_URL_SQS` here.
 * With a {@link FifoGroupGate} (`startLocalStack({ sqsBlocksFifoGroups: true })`) the proxy also
 * keeps SQS's FIFO rule that a message group in flight hands out nothing more (sqs-fifo-groups.ts).
 * The SQS stand-in behind it writes queue URLs with the proxy's port: the SDK sends each call to
 * its QueueUrl's host, so URLs of the stand-in's own port would bypass the proxy.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-key-management.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html#API_ReceiveMessage_Errors
 */
import { once } from 'node:events';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ChangeMessageVisibilityBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { KmsStandin } from './kms.js';
import { callerOf, hostStandin, type Standin } from './server.js';
import type { FifoGroupGate } from './sqs-fifo-groups.js';
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
  /** Keeps FIFO message groups blocked while one of their messages is in flight, when given. */
  fifoGroups?: FifoGroupGate;
  region: string;
  accountId: string;
  /** Called right before the proxy listens on `port` (frees a placeholder that held the port). */
  beforeListen?: () => Promise<void>;
}): Promise<Standin> {
  const { requestHandler } = createRequestHandler({
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
  const sqs = new SQSClient({
    region: options.region,
    endpoint: upstream.origin,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await options.beforeListen?.();
  return hostStandin(
    'SQS',
    (req, res, { calls }) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void (async () => {
          const body = Buffer.concat(chunks);
          const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
          const gate = options.fifoGroups;
          let parsed: Record<string, unknown> = {};
          if (gate) {
            try {
              parsed = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
            } catch {
              parsed = {};
            }
            gate.request(operation, parsed);
          }
          if (options.kms && USES_KEY.has(operation)) {
            const { QueueUrl } = JSON.parse(body.toString('utf8') || '{}') as { QueueUrl?: string };
            const attrs = await sqs
              .send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['KmsMasterKeyId'] }))
              .catch(() => undefined);
            const keyId = attrs?.Attributes?.KmsMasterKeyId;
            const refusal = keyId ? options.kms.useError(keyId, callerOf(req).accessKeyId) : undefined;
            if (refusal) {
              calls.push({
                operation,
                input: { QueueUrl },
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
          if (gate && operation === 'ReceiveMessage' && gate.gates(parsed.QueueUrl)) {
            const answer = await gatedReceive(sqs, gate, parsed).then(
              (out) => ({ status: 200, text: JSON.stringify(out) }),
              (error: unknown) => ({ status: 502, text: String(error) }),
            );
            res.writeHead(answer.status, {
              'content-type': 'application/x-amz-json-1.0',
              'content-length': String(Buffer.byteLength(answer.text)),
            });
            res.end(answer.text);
            return;
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
        })();
      });
    },
    {
      port: options.port,
      onClose: async () => {
        sqs.destroy();
        backend.closeAllConnections();
        await new Promise<void>((resolve) => backend.close(() => resolve()));
      },
    },
  );
}

/**
 * A ReceiveMessage of a gated FIFO queue: receives from the stand-in until it has messages of
 * groups not in flight (or the stand-in has nothing more), keeping the messages of blocked groups
 * invisible meanwhile so the stand-in hands out later groups, then hands those back (visibility 0).
 */
async function gatedReceive(
  sqs: SQSClient,
  gate: FifoGroupGate,
  request: Record<string, unknown>,
): Promise<{ Messages?: Message[] }> {
  const queueUrl = String(request.QueueUrl);
  const max = Number(request.MaxNumberOfMessages ?? 1);
  const asked = [
    ...((request.AttributeNames as string[]) ?? []),
    ...((request.MessageSystemAttributeNames as string[]) ?? []),
  ];
  const visibility =
    request.VisibilityTimeout === undefined
      ? Number(
          (
            await sqs.send(
              new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['VisibilityTimeout'] }),
            )
          ).Attributes?.VisibilityTimeout ?? 30,
        )
      : Number(request.VisibilityTimeout);
  const kept: Message[] = [];
  const handBack: string[] = [];
  try {
    for (let call = 0; call < 50 && kept.length === 0; call += 1) {
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: max,
          // Blocked messages stay invisible while the next receive looks past them.
          VisibilityTimeout: Math.max(visibility, 30),
          WaitTimeSeconds: call === 0 ? Number(request.WaitTimeSeconds ?? 0) : 0,
          AttributeNames: [...new Set([...asked, 'MessageGroupId'])] as never,
          MessageAttributeNames: (request.MessageAttributeNames as string[]) ?? [],
        }),
      );
      const batch = out.Messages ?? [];
      if (batch.length === 0) break;
      const sorted = gate.receive(
        { QueueUrl: queueUrl, VisibilityTimeout: visibility },
        asked,
        batch,
        visibility,
      );
      kept.push(...(sorted.messages as Message[]));
      handBack.push(...sorted.handBack);
    }
    // A receive with visibility 0 leaves what it keeps visible too.
    if (visibility === 0) handBack.push(...kept.flatMap((m) => (m.ReceiptHandle ? [m.ReceiptHandle] : [])));
  } finally {
    for (let i = 0; i < handBack.length; i += 10)
      await sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: handBack
            .slice(i, i + 10)
            .map((h, n) => ({ Id: `h${n}`, ReceiptHandle: h, VisibilityTimeout: 0 })),
        }),
      );
  }
  return kept.length > 0 ? { Messages: kept } : {};
}
