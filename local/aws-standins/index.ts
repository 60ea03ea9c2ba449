/**
 * The local AWS stand-ins the stack starts beside SQS and DynamoDB (docs/local-run.md, "Local
 * AWS stand-ins"), and the SDK endpoint variables that reach them.
 */
import { type CloudWatchStandin, startCloudWatchStandin } from './cloudwatch.js';
import { createDeliveries, createLocalHandlers, type Deliveries, type LocalHandlers } from './delivery.js';
import { type EventBridgeStandin, startEventBridgeStandin } from './eventbridge.js';
import { type IamStandin, startIamStandin } from './iam.js';
import { type KmsStandin, startKmsStandin } from './kms.js';
import { type LambdaStandin, startLambdaStandin } from './lambda.js';
import { startS3Standin } from './s3.js';
import type { Standin } from './server.js';
import { type SnsStandin, startSnsStandin } from './sns.js';
import { type StsStandin, startStsStandin } from './sts.js';

/** The running stand-ins. */
export interface Standins {
  cloudwatch: CloudWatchStandin;
  kms: KmsStandin;
  iam: IamStandin;
  s3: Standin;
  sns: SnsStandin;
  eventbridge: EventBridgeStandin;
  lambda: LambdaStandin;
  sts: StsStandin;
  /**
   * The local handlers SNS, EventBridge and Lambda deliver to (a function's, an HTTP endpoint's,
   * a rule target's), by function ARN or endpoint URL.
   */
  handlers: LocalHandlers;
  /** Every delivery SNS, EventBridge and Lambda made, and what they sent to DLQs. */
  deliveries: Deliveries;
  /** `AWS_ENDPOINT_URL_<SERVICE>` for each. */
  env: Record<string, string>;
  /** Stops every stand-in. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Starts every stand-in on free loopback ports.
 * @param options.sqsEndpoint - the local SQS server SNS, EventBridge and Lambda send to (queue
 *   subscriptions, DLQs, on-failure destinations).
 */
export async function startStandins(options: {
  region: string;
  accountId: string;
  sqsEndpoint: string;
}): Promise<Standins> {
  const started: Standin[] = [];
  try {
    // CloudWatch sends its alarm events to EventBridge, which starts after it.
    let eventbridge: EventBridgeStandin | undefined;
    const cloudwatch = await startCloudWatchStandin({
      ...options,
      emit: (event) => eventbridge?.putServiceEvent({ ...event }),
    });
    started.push(cloudwatch);
    const kms = await startKmsStandin(options);
    started.push(kms);
    const iam = await startIamStandin(options);
    started.push(iam);
    const s3 = await startS3Standin();
    started.push(s3);
    const handlers = createLocalHandlers();
    const deliveries = createDeliveries(options);
    const sns = await startSnsStandin({ ...options, handlers, deliveries });
    started.push(sns);
    eventbridge = await startEventBridgeStandin({ ...options, handlers, deliveries });
    started.push(eventbridge);
    const lambda = await startLambdaStandin({ ...options, handlers, deliveries });
    started.push(lambda);
    const sts = await startStsStandin(options);
    started.push(sts);
    return {
      cloudwatch,
      kms,
      iam,
      s3,
      sns,
      eventbridge,
      lambda,
      sts,
      handlers,
      deliveries,
      env: {
        AWS_ENDPOINT_URL_CLOUDWATCH: cloudwatch.url,
        AWS_ENDPOINT_URL_KMS: kms.url,
        AWS_ENDPOINT_URL_IAM: iam.url,
        AWS_ENDPOINT_URL_S3: s3.url,
        AWS_ENDPOINT_URL_SNS: sns.url,
        AWS_ENDPOINT_URL_EVENTBRIDGE: eventbridge.url,
        AWS_ENDPOINT_URL_LAMBDA: lambda.url,
        AWS_ENDPOINT_URL_STS: sts.url,
      },
      close: async () => {
        await deliveries.close();
        await Promise.all(started.map((s) => s.close()));
      },
    };
  } catch (error) {
    await Promise.all(started.map((s) => s.close()));
    throw error;
  }
}
