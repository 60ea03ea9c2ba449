/**
 * The package's errors: one base class with a literal `name` and a `code`, so callers (and Lambda's
 * error reporting) can tell them apart without `instanceof` across bundled copies.
 */

/** What went wrong, as a stable string. */
export type ConsumerIdempotencyErrorCode = 'InvalidOptions' | 'InvalidEvent' | 'InvalidBatchResponse';

/** Base class of every error this package throws. */
export class ConsumerIdempotencyError extends Error {
  public override readonly name: string = 'ConsumerIdempotencyError';

  public constructor(
    public readonly code: ConsumerIdempotencyErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Options given at construction are unusable (every problem is listed in the message, each naming
 * its option). Thrown by the factories, before any call to AWS.
 */
export class InvalidOptionsError extends ConsumerIdempotencyError {
  public override readonly name = 'InvalidOptionsError';

  public constructor(public readonly problems: readonly string[]) {
    super('InvalidOptions', `consumer-idempotency: invalid options: ${problems.join('; ')}`);
  }
}

/**
 * The Lambda event is not an SQS event (names the first offending field, e.g.
 * `Records[2].messageId`). Nothing was claimed or recorded.
 */
export class InvalidSqsEventError extends ConsumerIdempotencyError {
  public override readonly name = 'InvalidSqsEventError';

  public constructor(
    public readonly field: string,
    problem: string,
  ) {
    super('InvalidEvent', `consumer-idempotency: ${field}: ${problem}`);
  }
}

/**
 * The handler returned something other than exactly `{ batchItemFailures: [{ itemIdentifier }] }`
 * naming records it was given. Nothing was recorded as processed; the invocation fails, so Lambda
 * returns the whole batch to the queue.
 *
 * @see https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html#services-sqs-batchfailurereporting
 */
export class InvalidBatchResponseError extends ConsumerIdempotencyError {
  public override readonly name = 'InvalidBatchResponseError';

  public constructor(
    public readonly field: string,
    problem: string,
  ) {
    super('InvalidBatchResponse', `consumer-idempotency: handler response ${field}: ${problem}`);
  }
}
