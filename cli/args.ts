/**
 * Argument parsers for the `dlq` CLI's options: each names the option and the allowed range when
 * a value is refused, so a bad command line gets one line and exit code 2 before anything runs.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { parseSqsArn, queueUrlToArnHint } from '#incident/execution-input.js';
import { STATE_MACHINE_ARN_PATTERN } from '#platform/config.js';
import { CliError } from './output.js';

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

/**
 * A Step Functions state machine ARN (`--state-machine-arn`), checked when the command line is
 * parsed, before any AWS call.
 */
export function stateMachineArnArg(value: string): string {
  if (!STATE_MACHINE_ARN_PATTERN.test(value))
    throw new InvalidArgumentError(
      `must be a state machine ARN (arn:aws:states:<region>:<account-id>:stateMachine:<name>[:<alias>]), got ${JSON.stringify(value)}`,
    );
  return value;
}

/** A single-value option given twice (exit 2): which one, and both values. */
export class RepeatedOptionError extends CliError {
  public readonly code = 'repeated-option';
  public constructor(
    /** The option's long flag, e.g. `--sample-size`. */
    public readonly option: string,
    public readonly values: readonly [string, string],
  ) {
    super(
      `${option}: given more than once (${JSON.stringify(values[0])}, then ${JSON.stringify(values[1])}); give it once`,
      2,
    );
  }
}

/**
 * Makes every single-value option of `command` and of its subcommands refuse a second occurrence
 * (commander keeps the last one silently). Repeatable options ({@link collect}, variadic) and
 * flags without a value are left alone; an option's own parser still runs on its first value.
 *
 * @throws RepeatedOptionError from the parse, naming the option.
 */
export function refuseRepeatedOptions(command: Command): void {
  for (const option of command.options) {
    if (!(option.required || option.optional) || option.variadic || option.parseArg === collect) continue;
    const parse = option.parseArg;
    const key = option.attributeName();
    let first: string | undefined;
    option.argParser((value: string, previous: unknown) => {
      if (command.getOptionValueSource(key) === 'cli')
        throw new RepeatedOptionError(option.long ?? option.flags, [first ?? '', value]);
      first = value;
      return parse ? parse(value, previous) : value;
    });
  }
  for (const sub of command.commands) refuseRepeatedOptions(sub);
}

/** A non-empty name without control characters (audit trail, execution names). */
export function nameArg(value: string): string {
  if (value.trim().length === 0 || value.length > 128 || /[\p{Cc}\p{Cf}]/u.test(value))
    throw new InvalidArgumentError(`must be 1-128 printable characters, got ${JSON.stringify(value)}`);
  return value;
}
