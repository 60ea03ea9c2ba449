/**
 * Argument parsers for the `dlq` CLI's options: each names the option and the allowed range when
 * a value is refused, so a bad command line gets one line and exit code 2 before anything runs.
 */
import { InvalidArgumentError } from 'commander';
import { parseSqsArn, queueUrlToArnHint } from '#incident/execution-input.js';

/** An integer `min..max`. */
export function intArg(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`must be an integer ${min}..${max}, got "${value}"`);
    return n;
  };
}

/** A repeatable option: every value, in order. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** An SQS queue ARN (a queue URL is refused with the ARN to use, as the execution input does). */
export function sqsArnArg(value: string): string {
  if (!parseSqsArn(value)) {
    const hint = queueUrlToArnHint(value);
    throw new InvalidArgumentError(
      hint
        ? `must be an SQS ARN, got a queue URL (use ${hint})`
        : `must be an SQS ARN (arn:aws:sqs:<region>:<account-id>:<queue-name>), got "${value}"`,
    );
  }
  return value;
}

/** A non-empty name without control characters (audit trail, execution names). */
export function nameArg(value: string): string {
  if (value.trim().length === 0 || value.length > 128 || /[\p{Cc}\p{Cf}]/u.test(value))
    throw new InvalidArgumentError(`must be 1-128 printable characters, got ${JSON.stringify(value)}`);
  return value;
}
