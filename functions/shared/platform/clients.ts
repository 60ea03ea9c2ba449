/**
 * AWS SDK v3 clients, built once per Lambda container and reused across invocations.
 *
 * Endpoints come from the SDK's standard variables (`AWS_ENDPOINT_URL_SQS`,
 * `AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL_SFN`, `AWS_REGION`), so the same code runs on
 * AWS and against the local stack.
 *
 * @see https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

let sqs: SQSClient | undefined;
let dynamo: DynamoDBClient | undefined;
let doc: DynamoDBDocumentClient | undefined;
let sfn: SFNClient | undefined;

/** The shared SQS client. */
export function sqsClient(): SQSClient {
  sqs ??= new SQSClient({});
  return sqs;
}

/** The shared low-level DynamoDB client. */
export function dynamoClient(): DynamoDBClient {
  dynamo ??= new DynamoDBClient({});
  return dynamo;
}

/**
 * The shared DynamoDB document client. `Uint8Array` values are stored as Binary (B),
 * which is how raw message bytes are kept byte-exact.
 */
export function documentClient(): DynamoDBDocumentClient {
  doc ??= DynamoDBDocumentClient.from(dynamoClient(), {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  return doc;
}

/** The shared Step Functions client. */
export function sfnClient(): SFNClient {
  sfn ??= new SFNClient({});
  return sfn;
}

/** Forget cached clients (the local runner calls this after changing endpoint variables). */
export function resetClients(): void {
  sqs = undefined;
  dynamo = undefined;
  doc = undefined;
  sfn = undefined;
}
