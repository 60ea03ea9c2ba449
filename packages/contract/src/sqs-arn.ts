/**
 * SQS queue ARNs: the one pattern every schema (execution input, queue registration) and every
 * lookup uses.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-queue-message-identifiers.html
 * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/reference-arns.html
 */

/**
 * An SQS queue ARN: `arn:<partition>:sqs:<region>:<12-digit account>:<name>`, where the name is
 * 1-80 characters of `[A-Za-z0-9_-]`, a FIFO name ending in `.fifo` (counted in the 80), and the
 * region has a Region code's shape (`us-east-1`, `eu-central-2`, `us-gov-west-1`).
 */
export const SQS_QUEUE_ARN_PATTERN =
  /^arn:(aws|aws-cn|aws-us-gov|aws-iso|aws-iso-[a-z]|aws-eusc):sqs:([a-z]{2}(?:-[a-z]+)+-\d):(\d{12}):([A-Za-z0-9_-]{1,80}|[A-Za-z0-9_-]{1,75}\.fifo)$/;

/** The parts of an SQS queue ARN. */
export interface SqsArn {
  partition: string;
  region: string;
  accountId: string;
  /** Queue name, including `.fifo` for FIFO queues. */
  queueName: string;
  fifo: boolean;
}

/** Parses an SQS queue ARN, or returns undefined when `arn` is not one. */
export function parseSqsArn(arn: string): SqsArn | undefined {
  const match = SQS_QUEUE_ARN_PATTERN.exec(arn);
  if (!match) return undefined;
  const [, partition = '', region = '', accountId = '', queueName = ''] = match;
  return { partition, region, accountId, queueName, fifo: queueName.endsWith('.fifo') };
}
