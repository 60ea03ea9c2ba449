/**
 * The one place AWS SDK v3 clients are built (with scoped-clients.ts for other accounts and Regions): each once per Lambda container, on first use, and
 * reused across invocations. Nothing else in `functions/` constructs a client; a function's
 * `deps.ts` passes these to its ports.
 *
 * Endpoints come from the SDK's standard variables (`AWS_ENDPOINT_URL_SQS`,
 * `AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL_SFN`, `AWS_ENDPOINT_URL_LAMBDA`,
 * `AWS_ENDPOINT_URL_SECRETS_MANAGER`, `AWS_ENDPOINT_URL_CLOUDWATCH`, `AWS_ENDPOINT_URL_KMS`,
 * `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL_SNS`, `AWS_ENDPOINT_URL_EVENTBRIDGE`, `AWS_ENDPOINT_URL_STS`,
 * `AWS_REGION`), so the same code runs on AWS and against any endpoint those variables name. Targets in another
 * account or Region get their clients from `scopedClients` (scoped-clients.ts), keyed by account and Region,
 * with the credentials of the registered role and, locally, the endpoint `REMOTE_ENDPOINTS` names. Each factory is its own export, so a bundle carries only the clients its function
 * uses (the SDK packages declare `sideEffects: false`). The clients of rare calls (S3 HeadObject of
 * extended-client pointers, Lambda Invoke, IAM SimulatePrincipalPolicy) are loaded with
 * `await import()` on first use, so their packages stay off the cold path (docs/bundles.md).
 *
 * @see https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html
 */
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { IAMClient } from '@aws-sdk/client-iam';
import { KMSClient } from '@aws-sdk/client-kms';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type PipelineConfig, resetConfig } from './config.js';
import { boundByDeadline } from './deadline.js';

let sqs: SQSClient | undefined;
let dynamo: DynamoDBClient | undefined;
let doc: DynamoDBDocumentClient | undefined;
let sfn: SFNClient | undefined;
let cloudWatch: CloudWatchClient | undefined;
let kms: KMSClient | undefined;
let s3: Promise<S3Client> | undefined;
let lambda: Promise<LambdaClient> | undefined;
let iam: Promise<IAMClient> | undefined;
let secretsManager: SecretsManagerClient | undefined;
let sns: SNSClient | undefined;
let eventBridge: EventBridgeClient | undefined;

/** The shared SQS client; its calls end by the invocation's deadline (`boundByDeadline`). */
export function sqsClient(): SQSClient {
  sqs ??= boundByDeadline(new SQSClient({}));
  return sqs;
}

/** The shared low-level DynamoDB client; its calls end by the invocation's deadline. */
export function dynamoClient(): DynamoDBClient {
  dynamo ??= boundByDeadline(new DynamoDBClient({}));
  return dynamo;
}

/**
 * The shared DynamoDB document client. `Uint8Array` values are stored as Binary (B),
 * which is how raw message bytes are kept byte-exact.
 */
export function documentClient(): DynamoDBDocumentClient {
  doc ??= boundByDeadline(
    DynamoDBDocumentClient.from(dynamoClient(), {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    }),
  );
  return doc;
}

/** Where a store reads and writes: the shared document client and the configured table. */
export interface TableAccess {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}

/** The {@link TableAccess} every store of a function's `deps.ts` is built with. */
export function tableAccess(config: Pick<PipelineConfig, 'tableName'>): TableAccess {
  return { client: documentClient(), tableName: config.tableName };
}

/** The shared Step Functions client. */
export function sfnClient(): SFNClient {
  sfn ??= new SFNClient({});
  return sfn;
}

/**
 * The shared Lambda client (asynchronous invocations: lambda-invoke.ts), loaded on first use; its
 * calls end by the invocation's deadline.
 */
export function lambdaClient(): Promise<LambdaClient> {
  lambda ??= import('./lazy-lambda.js').then((m) => boundByDeadline(new m.LambdaClient({})));
  return lambda;
}

/**
 * The shared IAM client (preflight simulates the key users' policies), loaded on first use. The
 * SDK resolves the partition's global endpoint and signing Region from `AWS_REGION`.
 */
export function iamClient(): Promise<IAMClient> {
  iam ??= import('./lazy-iam.js').then((m) => boundByDeadline(new m.IAMClient({})));
  return iam;
}

/** The shared Secrets Manager client (the Slack secret). */
export function secretsManagerClient(): SecretsManagerClient {
  secretsManager ??= new SecretsManagerClient({});
  return secretsManager;
}

/** The shared CloudWatch client (triage reads a composite alarm's children). */
export function cloudWatchClient(): CloudWatchClient {
  cloudWatch ??= new CloudWatchClient({});
  return cloudWatch;
}

/** The shared KMS client (preflight reads the queues' keys). */
export function kmsClient(): KMSClient {
  kms ??= new KMSClient({});
  return kms;
}

/**
 * The shared S3 client (extended-client payload pointers: HeadObject only, never a delete), loaded
 * on first use. A bucket in another Region is asked again there (`followRegionRedirects`).
 * Locally `AWS_ENDPOINT_URL_S3` is an IP address, for which the SDK addresses buckets path-style.
 *
 * @see https://docs.aws.amazon.com/AWSJavaScriptSDK/v3/latest/Package/-aws-sdk-client-s3/Interface/S3ClientConfig/
 */
export function s3Client(): Promise<S3Client> {
  s3 ??= import('./lazy-s3.js').then((m) => boundByDeadline(new m.S3Client({ followRegionRedirects: true })));
  return s3;
}

/** The shared SNS client (the recording mover publishes to a subscription DLQ's topic). */
export function snsClient(): SNSClient {
  sns ??= new SNSClient({});
  return sns;
}

/** The shared EventBridge client (the recording mover puts a rule target DLQ's events back). */
export function eventBridgeClient(): EventBridgeClient {
  eventBridge ??= new EventBridgeClient({});
  return eventBridge;
}

const resetHooks: Array<() => void> = [];

/** Runs `hook` on every {@link resetClients} (scoped-clients.ts forgets its clients with it). */
export function onResetClients(hook: () => void): void {
  resetHooks.push(hook);
}

/**
 * The reset hook: forgets every cached client and the cached configuration (config.ts), so the
 * next use reads the environment again. Called after endpoint variables are set; tests call it after changing any variable the pipeline reads.
 */
export function resetClients(): void {
  sqs = undefined;
  dynamo = undefined;
  doc = undefined;
  sfn = undefined;
  lambda = undefined;
  secretsManager = undefined;
  cloudWatch = undefined;
  kms = undefined;
  s3 = undefined;
  iam = undefined;
  sns = undefined;
  eventBridge = undefined;
  for (const hook of resetHooks) hook();
  resetConfig();
}
