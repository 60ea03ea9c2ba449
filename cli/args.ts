/**
 * Argument parsers for the `dlq` CLI's options: each names the option and the allowed range when
 * a value is refused, so a bad command line gets one line and exit code 2 before anything runs.
 */
import { InvalidArgumentError } from 'commander';
import { parseSqsArn, queueUrlToArnHint } from '#incident/execution-input.js';

/**
 * A plain decimal integer `min..max`, the one parser of every numeric flag (the `dlq` CLI and
 * `npm start`): ASCII digits only, no sign, no blanks, no leading zero, no exponent, hex or
 * fraction, so "0x32", "1e2", " 5 ", "+5", "05" and "5.0" are all refused rather than read as
 * something the operator may not have meant.
 *
 * @returns the number, or a message (`must be an integer min..max, got "..."`) when refused.
 */
export function decimalInt(value: string, min: number, max: number): number | string {
  const n = Number(value);
  if (!/^(0|[1-9]\d*)$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max)
    return `must be an integer ${min}..${max}, got ${JSON.stringify(value)}`;
  return n;
}

/**
 * A comma-separated list of plain decimal integers, each `min..max` (`--ramp-rates 5,50,200`).
 * An empty item ("10,,20", "10,") is refused, never skipped.
 *
 * @returns the numbers in order, or a message naming the first bad item.
 */
export function decimalIntList(value: string, min: number, max: number): number[] | string {
  const items = value.split(',');
  const out: number[] = [];
  for (const [i, item] of items.entries()) {
    const n = decimalInt(item, min, max);
    if (typeof n === 'string')
      return `item ${i + 1} of ${JSON.stringify(value)} ${item === '' ? 'is empty' : n} (comma-separated integers ${min}..${max}, no blanks)`;
    out.push(n);
  }
  return out;
}

/** A commander option parser for an integer `min..max` ({@link decimalInt}). */
export function intArg(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = decimalInt(value, min, max);
    if (typeof n === 'string') throw new InvalidArgumentError(n);
    return n;
  };
}

/** A commander option parser for a comma-separated integer list ({@link decimalIntList}). */
export function intListArg(min: number, max: number): (value: string) => number[] {
  return (value) => {
    const n = decimalIntList(value, min, max);
    if (typeof n === 'string') throw new InvalidArgumentError(n);
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
