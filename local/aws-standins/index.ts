/**
 * The local AWS stand-ins the stack starts beside SQS and DynamoDB (docs/local-run.md, "Local
 * AWS stand-ins"), and the SDK endpoint variables that reach them.
 */
import { type CloudWatchStandin, startCloudWatchStandin } from './cloudwatch.js';
import { type IamStandin, startIamStandin } from './iam.js';
import { type KmsStandin, startKmsStandin } from './kms.js';
import { startS3Standin } from './s3.js';
import type { Standin } from './server.js';

/** The running stand-ins. */
export interface Standins {
  cloudwatch: CloudWatchStandin;
  kms: KmsStandin;
  iam: IamStandin;
  s3: Standin;
  /** `AWS_ENDPOINT_URL_<SERVICE>` for each. */
  env: Record<string, string>;
  /** Stops every stand-in. Safe to call twice. */
  close(): Promise<void>;
}

/** Starts every stand-in on free loopback ports. */
export async function startStandins(options: { region: string; accountId: string }): Promise<Standins> {
  const started: Standin[] = [];
  try {
    const cloudwatch = await startCloudWatchStandin(options);
    started.push(cloudwatch);
    const kms = await startKmsStandin(options);
    started.push(kms);
    const iam = await startIamStandin(options);
    started.push(iam);
    const s3 = await startS3Standin();
    started.push(s3);
    return {
      cloudwatch,
      kms,
      iam,
      s3,
      env: {
        AWS_ENDPOINT_URL_CLOUDWATCH: cloudwatch.url,
        AWS_ENDPOINT_URL_KMS: kms.url,
        AWS_ENDPOINT_URL_IAM: iam.url,
        AWS_ENDPOINT_URL_S3: s3.url,
      },
      close: async () => {
        await Promise.all(started.map((s) => s.close()));
      },
    };
  } catch (error) {
    await Promise.all(started.map((s) => s.close()));
    throw error;
  }
}
