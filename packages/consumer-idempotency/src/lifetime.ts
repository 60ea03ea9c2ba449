/**
 * How long a processed-key record lives, and the check that it outlives the redrive window.
 *
 * A record must exist for as long as another copy of the same message can still reach the
 * consumer. After a consumer processed a message without deleting it (a timeout after the work,
 * a lost DeleteMessage), the copy is received again until `maxReceiveCount`, moves to the DLQ,
 * stays there up to the DLQ's retention period, and a redrive (approval, sample, verification and
 * a move task that runs up to 36 hours) brings it back. So the record's lifetime must be at least
 * the DLQ's retention period plus the longest redrive:
 *
 *     recordTtlSeconds >= dlqRetentionSeconds + redriveWindowSeconds
 *
 * For a standard DLQ the retention clock keeps the original enqueue time, so this bound is
 * generous; for a FIFO DLQ the clock restarts on the move, so add the time a message spends in the
 * source before it dead-letters (maxReceiveCount x visibility timeout) to `redriveWindowSeconds`.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
 */

/** SQS's longest retention period, seconds (14 days). */
export const MAX_SQS_RETENTION_SECONDS = 14 * 24 * 3600;
/** SQS's shortest retention period, seconds (60 s). */
export const MIN_SQS_RETENTION_SECONDS = 60;
/**
 * Default redrive window, seconds (3 days): the pipeline's longest run is its approval timeout
 * (1 h) + the verification window + a move task's 36-hour limit + 12 h margin (its workflow lease),
 * about 50 h with a 1-hour verification window; 72 h leaves room for verification windows up to 23 h.
 */
export const DEFAULT_REDRIVE_WINDOW_SECONDS = 3 * 24 * 3600;

/** The lifetime options of a processed-key record. */
export interface RecordLifetimeOptions {
  /**
   * The DLQ's MessageRetentionPeriod, seconds (60..1,209,600).
   * @default 1209600 (14 days, the SQS maximum: safe whatever the DLQ's setting)
   */
  readonly dlqRetentionSeconds?: number;
  /**
   * The longest a redrive can take, seconds (>= 0).
   * @default 259200 (3 days)
   */
  readonly redriveWindowSeconds?: number;
  /**
   * Lifetime of a processed-key record, seconds. Must be at least dlqRetentionSeconds +
   * redriveWindowSeconds.
   * @default dlqRetentionSeconds + redriveWindowSeconds
   */
  readonly recordTtlSeconds?: number;
}

/** The resolved lifetime, seconds. */
export interface RecordLifetime {
  readonly dlqRetentionSeconds: number;
  readonly redriveWindowSeconds: number;
  readonly recordTtlSeconds: number;
}

function isWholeSeconds(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}

/**
 * Resolves and checks the lifetime options.
 * @returns the lifetime and the problems found (empty when usable); each problem names its option,
 *   the allowed range and the value given.
 */
export function resolveRecordLifetime(options: RecordLifetimeOptions): {
  lifetime: RecordLifetime;
  problems: string[];
} {
  const problems: string[] = [];
  const dlqRetentionSeconds = options.dlqRetentionSeconds ?? MAX_SQS_RETENTION_SECONDS;
  const redriveWindowSeconds = options.redriveWindowSeconds ?? DEFAULT_REDRIVE_WINDOW_SECONDS;
  if (
    !isWholeSeconds(dlqRetentionSeconds) ||
    dlqRetentionSeconds < MIN_SQS_RETENTION_SECONDS ||
    dlqRetentionSeconds > MAX_SQS_RETENTION_SECONDS
  )
    problems.push(
      `dlqRetentionSeconds must be whole seconds in ${MIN_SQS_RETENTION_SECONDS}..${MAX_SQS_RETENTION_SECONDS} (got ${dlqRetentionSeconds})`,
    );
  if (!isWholeSeconds(redriveWindowSeconds))
    problems.push(`redriveWindowSeconds must be whole seconds >= 0 (got ${redriveWindowSeconds})`);
  const floor = dlqRetentionSeconds + redriveWindowSeconds;
  const recordTtlSeconds = options.recordTtlSeconds ?? floor;
  if (!isWholeSeconds(recordTtlSeconds))
    problems.push(`recordTtlSeconds must be whole seconds (got ${recordTtlSeconds})`);
  else if (problems.length === 0 && recordTtlSeconds < floor)
    problems.push(
      `recordTtlSeconds (${recordTtlSeconds}) must be at least dlqRetentionSeconds (${dlqRetentionSeconds}) + redriveWindowSeconds (${redriveWindowSeconds}) = ${floor}: a redriven copy could arrive after its record expired and be processed again`,
    );
  return { lifetime: { dlqRetentionSeconds, redriveWindowSeconds, recordTtlSeconds }, problems };
}
