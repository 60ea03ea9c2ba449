/**
 * SQS of another AWS account (or Region): a second `local-aws-sqs` server on its own loopback
 * port, with that account id and Region in its queue ARNs and URLs. `local-aws-sqs` serves one
 * account per server, so a target in another account is a server of its own, reached as the
 * pipeline reaches it on AWS: through the client factory of that account and Region
 * (`REMOTE_ENDPOINTS`, functions/shared/platform/scoped-clients.ts) with the credentials of the
 * registered role (the STS stand-in's assumed-role keys).
 *
 * Every call is recorded with the access key id it was signed with (its SigV4 `Credential`), so a
 * test can tell which role sent what: `StsStandin.roleOf(call.accessKeyId)`. Credentials are not
 * verified, as in the other stand-ins.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-basic-examples-of-sqs-policies.html
 * @see https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { callerOf, hostStandin, type Standin } from './server.js';
import { createRequestHandler } from './sqs-indexed.js';

/** The running SQS of the other account. */
export interface SqsAccountStandin extends Standin {
  readonly accountId: string;
  readonly region: string;
  /** `{ "<account>/<region>": { sqs: url } }`: this account's entry of `REMOTE_ENDPOINTS`. */
  readonly remoteEndpoints: Record<string, { sqs: string }>;
}

/**
 * Starts the SQS of `accountId` in `region` on a free loopback port.
 * @param options.accountId - 12 digits, not the pipeline's own account (or another Region).
 */
export async function startSqsAccount(options: {
  accountId: string;
  region: string;
}): Promise<SqsAccountStandin> {
  let handle: ((request: IncomingMessage, response: ServerResponse) => unknown) | undefined;
  const standin = await hostStandin('SQS', (request, response, { calls }) => {
    // awsJson 1.0: the operation is in the target header; the body is left for the SQS stand-in.
    const operation = String(request.headers['x-amz-target'] ?? '').split('.')[1] ?? '(unknown)';
    calls.push({ operation, input: {}, accessKeyId: callerOf(request).accessKeyId });
    void handle?.(request, response);
  });
  // Queue URLs name this port: the SDK sends each call to its QueueUrl's host.
  handle = createRequestHandler({
    port: Number(new URL(standin.url).port),
    hostname: '127.0.0.1',
    region: options.region,
    accountId: options.accountId,
    emulateQueueCreationLifecycle: false,
  }).requestHandler;
  return Object.assign(standin, {
    accountId: options.accountId,
    region: options.region,
    remoteEndpoints: { [`${options.accountId}/${options.region}`]: { sqs: standin.url } },
  });
}
