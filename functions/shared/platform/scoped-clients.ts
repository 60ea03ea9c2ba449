/**
 * Clients for a target in another account or Region (the recording mover), keyed by account,
 * Region and role. Its own module, apart from clients.ts, so that only the functions that reach
 * other accounts link STS AssumeRole.
 *
 * @see https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRole.html
 */
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { lambdaClient, onResetClients } from './clients.js';
import { pipelineConfig } from './config.js';
import { boundByDeadline } from './deadline.js';
import { createLambdaInvoker, type LambdaInvoker } from './lambda-invoke.js';

let sts: STSClient | undefined;
let invoker: LambdaInvoker | undefined;
let scoped = new Map<string, ScopedClients>();

/** The shared STS client (assumes the registered roles of other accounts). */
export function stsClient(): STSClient {
  sts ??= new STSClient({});
  return sts;
}

/** Asynchronous Lambda invocations in the function's own account and Region (clients.ts `lambdaClient`). */
export function lambdaInvoker(): LambdaInvoker {
  invoker ??= createLambdaInvoker(lambdaClient);
  return invoker;
}

/** Forgets the STS client, the Lambda invoker and every scoped client (on `resetClients`). */
onResetClients(() => {
  sts = undefined;
  invoker = undefined;
  scoped = new Map();
});

/** Where a target lives, and the role that reaches it when it is not the pipeline's own account and Region. */
export interface ClientScope {
  accountId: string;
  region: string;
  /** The registered role to assume; absent: the function's own credentials. */
  role?: { roleArn: string; externalId?: string | undefined };
}

/** The clients of one account and Region (built on first use). */
export interface ScopedClients {
  sqs(): SQSClient;
  sns(): SNSClient;
  eventBridge(): EventBridgeClient;
  /** Asynchronous Lambda invocations (lambda-invoke.ts; the Lambda client is loaded on first use). */
  lambdaInvoker(): LambdaInvoker;
}

/** Credentials refresh this long before they expire, milliseconds. */
const REFRESH_MARGIN_MS = 5 * 60_000;

/**
 * Clients for a target in another account or Region: one set per account, Region and role, with
 * the credentials of `scope.role` (STS AssumeRole through {@link stsClient}, renewed five minutes
 * before they expire) and the endpoint `REMOTE_ENDPOINTS` names for that account and Region
 * (locally; on AWS the Region's public endpoint).
 *
 * @see https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRole.html
 * @see https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html
 */
export function scopedClients(scope: ClientScope): ScopedClients {
  const id = `${scope.accountId}/${scope.region}/${scope.role?.roleArn ?? ''}`;
  const cached = scoped.get(id);
  if (cached) return cached;
  const endpoints = pipelineConfig().remoteEndpoints[`${scope.accountId}/${scope.region}`] ?? {};
  let session: { value: Awaited<ReturnType<typeof assume>>; renewAt: number } | undefined;
  const assume = async (role: NonNullable<ClientScope['role']>) => {
    const out = await stsClient().send(
      new AssumeRoleCommand({
        RoleArn: role.roleArn,
        RoleSessionName: 'dlq-redrive-mover',
        ...(role.externalId ? { ExternalId: role.externalId } : {}),
      }),
    );
    const c = out.Credentials;
    return {
      accessKeyId: c?.AccessKeyId ?? '',
      secretAccessKey: c?.SecretAccessKey ?? '',
      sessionToken: c?.SessionToken ?? '',
      expiration: c?.Expiration ?? new Date(Date.now() + 900_000),
    };
  };
  const role = scope.role;
  const credentials = role
    ? async () => {
        if (!session || Date.now() >= session.renewAt) {
          const value = await assume(role);
          session = { value, renewAt: value.expiration.getTime() - REFRESH_MARGIN_MS };
        }
        return session.value;
      }
    : undefined;
  const options = (endpoint: string | undefined) => ({
    region: scope.region,
    ...(credentials ? { credentials } : {}),
    ...(endpoint ? { endpoint } : {}),
  });
  const clients: {
    sqs?: SQSClient;
    sns?: SNSClient;
    eventBridge?: EventBridgeClient;
    lambda?: LambdaInvoker;
    lambdaClient?: Promise<LambdaClient>;
  } = {};
  const built: ScopedClients = {
    sqs: () => (clients.sqs ??= new SQSClient(options(endpoints.sqs))),
    sns: () => (clients.sns ??= new SNSClient(options(endpoints.sns))),
    eventBridge: () => (clients.eventBridge ??= new EventBridgeClient(options(endpoints.eventbridge))),
    lambdaInvoker: () =>
      (clients.lambda ??= createLambdaInvoker(() => {
        clients.lambdaClient ??= import('./lazy-lambda.js').then((m) =>
          boundByDeadline(new m.LambdaClient(options(endpoints.lambda))),
        );
        return clients.lambdaClient;
      })),
  };
  scoped.set(id, built);
  return built;
}
