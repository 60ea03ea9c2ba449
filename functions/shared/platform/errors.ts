/**
 * One error hierarchy for the whole pipeline.
 *
 * Every error the pipeline throws on purpose is a {@link RedriveError}: it carries a stable
 * `name` (a string literal, so it survives minification), a `code` from {@link RedriveErrorCode},
 * a `retryable` flag and an optional `cause`.
 *
 * Step Functions sees a Lambda failure as `{ Error: <errorType>, Cause: <json> }`, where the
 * error type is the thrown error's `name`. The ASL's `Retry` blocks list the retryable names and
 * `Catch` routes the rest to the failure recorder.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
 */

/** Machine-readable error codes; the ASL matches on the error `name`, callers on `code`. */
export type RedriveErrorCode =
  | 'INVALID_INPUT'
  | 'INVALID_EVENT'
  | 'QUEUE_NOT_FOUND'
  | 'ACCESS_DENIED'
  | 'INVALID_QUEUE_CONFIG'
  | 'INVALID_CONFIG'
  | 'UNRESOLVABLE_ALARM'
  | 'REDRIVE_REFUSED'
  | 'MOVE_TASK_ACTIVE'
  | 'CONFLICT'
  | 'THROTTLED'
  | 'INCOMPLETE'
  | 'INTERNAL';

/** Base class of every error the pipeline throws deliberately. */
export class RedriveError extends Error {
  /** Stable error name, used by Step Functions Retry/Catch matching. */
  public override readonly name: string = 'RedriveError';
  public readonly code: RedriveErrorCode;
  public readonly retryable: boolean;
  /** Structured details (for example the list of input problems), safe to log and show. */
  public readonly details: readonly string[];

  public constructor(
    code: RedriveErrorCode,
    message: string,
    options: { retryable?: boolean; cause?: unknown; details?: readonly string[] } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = options.details ?? [];
  }
}

/**
 * Input (event, console input, Slack request, queue configuration) failed validation.
 * Nothing was changed. `details` lists every problem, each naming its field.
 */
export class InvalidInputError extends RedriveError {
  public override readonly name = 'Redrive.InvalidInput';
  public constructor(message: string, details: readonly string[] = [], cause?: unknown) {
    super('INVALID_INPUT', details.length > 0 ? `${message}: ${details.join('; ')}` : message, {
      details,
      cause,
    });
  }
}

/**
 * The function's environment is misconfigured (a variable missing or malformed). Nothing was
 * read or written. `details` names every bad variable. Not retryable: a redeploy fixes it.
 */
export class ConfigurationError extends RedriveError {
  public override readonly name = 'Redrive.InvalidConfiguration';
  public constructor(details: readonly string[], cause?: unknown) {
    super('INVALID_CONFIG', `invalid configuration: ${details.join('; ')}`, { details, cause });
  }
}

/** A queue named by an alarm, input or configuration does not exist. Not retryable. */
export class QueueNotFoundError extends RedriveError {
  public override readonly name = 'Redrive.QueueNotFound';
  public constructor(queue: string, cause?: unknown) {
    super('QUEUE_NOT_FOUND', `queue not found: ${queue}`, { cause });
  }
}

/** The function's role may not perform an action on a resource. Not retryable. */
export class AccessDeniedError extends RedriveError {
  public override readonly name = 'Redrive.AccessDenied';
  public constructor(action: string, resource: string, cause?: unknown) {
    super('ACCESS_DENIED', `access denied: ${action} on ${resource}`, { cause });
  }
}

/** A redrive would be unsafe (queue types differ, task running, plan too slow...). Nothing moved. */
export class RedriveRefusedError extends RedriveError {
  public override readonly name = 'Redrive.Refused';
  public constructor(reason: string, details: readonly string[] = []) {
    super('REDRIVE_REFUSED', `redrive refused: ${reason}`, { details });
  }
}

/** A transient AWS failure (throttling, 5xx, unprocessed items past the deadline). Retry. */
export class TransientError extends RedriveError {
  public override readonly name = 'Redrive.Transient';
  public constructor(message: string, cause?: unknown) {
    super('THROTTLED', message, { retryable: true, cause });
  }
}

/** True when the error is worth retrying (a {@link RedriveError} marked retryable, or an SDK throttle/5xx). */
export function isRetryable(error: unknown): boolean {
  if (error instanceof RedriveError) return error.retryable;
  const meta = (error as { $metadata?: { httpStatusCode?: number }; $retryable?: unknown } | null) ?? null;
  if (meta?.$retryable) return true;
  const status = meta?.$metadata?.httpStatusCode;
  return typeof status === 'number' && status >= 500;
}

/** The AWS error code of an SDK v3 error (`name`), or undefined for anything else. */
export function awsErrorName(error: unknown): string | undefined {
  if (error && typeof error === 'object' && '$metadata' in error) {
    return (error as { name?: string }).name;
  }
  return undefined;
}

/** Wraps an unknown throw as a non-retryable internal {@link RedriveError}; passes ours through. */
export function toRedriveError(error: unknown): RedriveError {
  if (error instanceof RedriveError) return error;
  if (isRetryable(error)) return new TransientError(errorMessage(error), error);
  return new RedriveError('INTERNAL', errorMessage(error), { cause: error });
}

/** A printable message for anything thrown. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
