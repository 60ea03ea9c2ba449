/**
 * One error hierarchy for the whole pipeline.
 *
 * Every error the pipeline throws on purpose is a subclass of {@link RedriveError}: it carries a
 * stable `name` (a string literal class field, so it survives minification; never derived from
 * the class name), a `code` from {@link RedriveErrorCode} (one class per code, and every class is
 * thrown somewhere: test/unit/errors.test.ts), a `retryable` flag and an optional `cause`.
 *
 * How a name reaches the workflow: the Lambda Node.js runtime reports a thrown error as
 * `{ "errorType": error.name, "errorMessage": error.message, "trace": [...] }`; Step Functions
 * makes `errorType` the Task's `Error` (what `Retry` / `Catch` `ErrorEquals` match) and the whole
 * JSON its `Cause`. The ASL's `Retry` blocks list the retryable names (`Redrive.Transient`) and
 * `Catch` routes the rest to the failure recorder.
 *
 * Callers test errors with the guards below (`isRetryable`, `isConditionalCheckFailed`) or
 * `instanceof` a class, never by parsing messages.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
 * @see https://docs.aws.amazon.com/lambda/latest/dg/nodejs-exceptions.html
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/** Machine-readable error codes, one per error class; the ASL matches on the error `name`. */
export type RedriveErrorCode =
  | 'INVALID_INPUT'
  | 'INVALID_CONFIG'
  | 'QUEUE_NOT_FOUND'
  | 'ACCESS_DENIED'
  | 'KMS_KEY_UNUSABLE'
  | 'REDRIVE_REFUSED'
  | 'TRANSIENT'
  | 'RECORD_NOT_FOUND'
  | 'STATE_CONFLICT'
  | 'TASK_CLOSED'
  | 'BODY_INTEGRITY'
  | 'UNKNOWN_SHAPE_VERSION'
  | 'INTERNAL';

/** Base class of every error the pipeline throws deliberately; throw one of its subclasses. */
export abstract class RedriveError extends Error {
  /** Stable error name, used by Step Functions Retry/Catch matching. */
  public abstract override readonly name: string;
  public readonly code: RedriveErrorCode;
  public readonly retryable: boolean;
  /** Structured details (for example the list of input problems), safe to log and show. */
  public readonly details: readonly string[];

  protected constructor(
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
 * Input (event, console input, Slack request, queue registration) failed validation.
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

/**
 * SQS could not use a queue's KMS key for the pipeline: the key is disabled, pending deletion,
 * gone, not usable for encryption, or the caller may not use it (SQS's `KmsAccessDenied`,
 * `KmsDisabled`, `KmsInvalidState`, `KmsNotFound`, `KmsInvalidKeyUsage`, `KmsOptInRequired`; the
 * legacy codes `KMS.AccessDeniedException`...). Not retryable: `KmsThrottled` is a
 * {@link TransientError} instead (the SQS adapter decides), so the ASL's `Retry` on
 * `Redrive.Transient` covers it.
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html#API_ReceiveMessage_Errors
 */
export class KmsKeyError extends RedriveError {
  public override readonly name = 'Redrive.KmsKeyUnusable';
  public constructor(
    /** The queue URL or name the call was on. */
    public readonly queue: string,
    /** The KMS action SQS needed for the caller (`kms:Decrypt` to receive, `kms:GenerateDataKey` to send). */
    public readonly kmsAction: string,
    /** The SQS error name, e.g. `KmsDisabled`. */
    public readonly sqsError: string,
    detail: string,
    cause?: unknown,
  ) {
    super('KMS_KEY_UNUSABLE', `KMS key of ${queue} is unusable for ${kmsAction}: ${sqsError} (${detail})`, {
      cause,
    });
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
    super('TRANSIENT', message, { retryable: true, cause });
  }
}

/**
 * A record the caller expected is not in the table (an incident to update, an envelope to move
 * on, an approval to annotate). Not retryable; callers that can do without it catch this class
 * (a console start has no incident record).
 */
export class RecordNotFoundError extends RedriveError {
  public override readonly name = 'Redrive.RecordNotFound';
  /** What was looked for, e.g. `incident inc-3f2a...`. */
  public readonly record: string;
  public constructor(record: string, cause?: unknown) {
    super('RECORD_NOT_FOUND', `no ${record}`, { cause });
    this.record = record;
  }
}

/**
 * A conditional write found the record in another state than the one it expected (another
 * attempt or run moved it on first). Nothing was written. Not retryable as is: re-read first.
 */
export class StateConflictError extends RedriveError {
  public override readonly name = 'Redrive.StateConflict';
  public constructor(record: string, expected: string, actual: string | undefined, cause?: unknown) {
    super(
      'STATE_CONFLICT',
      `${record} is ${actual === undefined ? 'in another state' : `in state ${actual}`}, not ${expected}`,
      { cause },
    );
  }
}

/** Why Step Functions refused a task token: the task behind it is gone. */
export type TaskClosedReason = 'task-timed-out' | 'task-does-not-exist' | 'invalid-token';

/** The task behind a task token is gone (timed out, already completed, bad token): do not retry, close the approval. */
export class TaskClosedError extends RedriveError {
  public override readonly name = 'Redrive.TaskClosed';
  public readonly reason: TaskClosedReason;
  public constructor(reason: TaskClosedReason, cause?: unknown) {
    super('TASK_CLOSED', `the approval task is closed (${reason})`, { cause });
    this.reason = reason;
  }
}

/**
 * A stored message body does not match its envelope (a chunk missing, or the SHA-256 / byte length
 * differs): the bytes are not sent anywhere. Not retryable.
 */
export class BodyIntegrityError extends RedriveError {
  public override readonly name = 'Redrive.BodyIntegrity';
  public constructor(messageId: string, problem: string) {
    super('BODY_INTEGRITY', `body of ${messageId}: ${problem}`);
  }
}

/**
 * A stored record carries a `shapeVersion` this code does not read (a newer release wrote it, or
 * the attribute is not a positive integer): nothing was read from it (platform/record-shapes.ts).
 * Not retryable: deploy the release that knows the version to every function that reads the table.
 */
export class UnknownShapeVersionError extends RedriveError {
  public override readonly name = 'Redrive.UnknownShapeVersion';
  /** The kind of record, e.g. `envelope`. */
  public readonly kind: string;
  /** The `shapeVersion` found, as stored. */
  public readonly found: unknown;
  public constructor(kind: string, record: string, found: unknown, known: number) {
    super(
      'UNKNOWN_SHAPE_VERSION',
      `${record} has shapeVersion ${JSON.stringify(found)}; this release reads ${kind} versions 1..${known}` +
        ' (a newer release wrote it: deploy that release to every function)',
    );
    this.kind = kind;
    this.found = found;
  }
}

/**
 * Anything thrown that is not one of ours (a bug, an SDK error no adapter mapped), wrapped by
 * {@link toRedriveError}. Not retryable. Its name stays `RedriveError`, as in earlier releases
 * (reports and alarms may match on it).
 */
export class InternalError extends RedriveError {
  public override readonly name = 'RedriveError';
  public constructor(message: string, cause?: unknown) {
    super('INTERNAL', message, { cause });
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

/**
 * `error` as a {@link TransientError} naming `action` (`dynamodb:PutItem (ledger)`) when it is worth
 * retrying ({@link isRetryable}), else `error` itself: how a store adapts an AWS failure at its
 * boundary before it rethrows it, so the workflow's `Retry` on `Redrive.Transient` covers it.
 *
 * @example
 * ```ts
 * catch (error) { throw asTransient('dynamodb:GetItem (ledger)', error); }
 * ```
 */
export function asTransient(action: string, error: unknown): unknown {
  return isRetryable(error) ? new TransientError(`${action}: ${errorMessage(error)}`, error) : error;
}

/** The AWS error code of an SDK v3 error (`name`), or undefined for anything else. */
export function awsErrorName(error: unknown): string | undefined {
  if (error && typeof error === 'object' && '$metadata' in error) {
    return (error as { name?: string }).name;
  }
  return undefined;
}

/**
 * True when a DynamoDB write failed its `ConditionExpression` (`ConditionalCheckFailedException`,
 * from the low-level or the document client). The one way the pipeline recognises it: stores turn
 * it into data ("already exists", "not ours") or into {@link RecordNotFoundError} /
 * {@link StateConflictError} at their boundary.
 *
 * With `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'` the error's `Item` holds the item as it
 * was (marshalled), absent when there was none.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_PutItem.html#API_PutItem_Errors
 */
export function isConditionalCheckFailed(
  error: unknown,
): error is Error & { name: 'ConditionalCheckFailedException'; Item?: Record<string, AttributeValue> } {
  return awsErrorName(error) === 'ConditionalCheckFailedException';
}

/** Wraps an unknown throw as a non-retryable {@link InternalError} (retryable ones as {@link TransientError}); passes ours through. */
export function toRedriveError(error: unknown): RedriveError {
  if (error instanceof RedriveError) return error;
  if (isRetryable(error)) return new TransientError(errorMessage(error), error);
  return new InternalError(errorMessage(error), error);
}

/** A printable message for anything thrown. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
