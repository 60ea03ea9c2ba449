import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { RepeatedOptionError } from '../../cli/args.js';
import { decodeBody, encodeBody } from '../../cli/commands/envelopes.js';
import { contextFromEnv } from '../../cli/context.js';
import { buildProgram } from '../../cli/main.js';
import { CLI_BUILD } from '../../scripts/build-cli.js';
import { dlq } from '../support/cli.js';

const run = promisify(execFile);
const ARN = 'arn:aws:sqs:us-east-1:123456789012:orders-dlq';
const BIN = new URL('../../bin/dlq.mjs', import.meta.url).pathname;
const SFN_ARN = 'arn:aws:states:us-east-1:123456789012:stateMachine:dlq-redrive';

// The binary runs the built CLI: build it from the sources under test, as `npm ci` does.
beforeAll(async () => {
  await build(CLI_BUILD);
});

/** Runs the real binary; resolves with its exit code and output even when it fails. */
async function bin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const out = await run('node', [BIN, ...args], {
      // No endpoint: a command that reached AWS would fail differently (and slowly) than exit 2.
      env: { ...process.env, AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9', AWS_REGION: 'us-east-1' },
    });
    return { code: 0, ...out };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('dlq command line', () => {
  it('the installed binary prints help for every command and exits 0', async () => {
    const top = await bin('--help');
    expect(top.code).toBe(0);
    for (const command of ['incidents', 'show', 'envelopes', 'register', 'registrations'])
      expect(top.stdout).toContain(command);
    const sub = await bin('envelopes', '--help');
    expect([sub.code, sub.stdout.includes('--export <file>'), sub.stdout.includes('--json')]).toEqual([
      0,
      true,
      true,
    ]);
  });

  it.each([
    [['incidents', '--limit', 'lots'], /--limit <n>.*must be an integer 1\.\.1000, got "lots"/],
    [['show'], /missing required argument 'incident'/],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['incidents', '--colour'], /unknown option '--colour'/],
    [['envelopes', 'inc-1', '--export', 'out.csv'], /^dlq: --export: the file name must end in \.jsonl/],
    [
      ['register', 'https://sqs.us-east-1.amazonaws.com/123456789012/orders-dlq'],
      /must be an SQS ARN, got a queue URL \(use arn:aws:sqs:us-east-1:123456789012:orders-dlq\)/,
    ],
    // One parser for every numeric flag (F5): plain decimal integers, never Number()'s reading.
    [['incidents', '--limit', '0x32'], /--limit <n>.*must be an integer 1\.\.1000, got "0x32"/],
    [['incidents', '--limit', '1e2'], /--limit <n>.*must be an integer 1\.\.1000, got "1e2"/],
    [['incidents', '--limit', ' 5 '], /--limit <n>.*must be an integer 1\.\.1000, got " 5 "/],
    [['register', ARN, '--ramp-rates', '0x32'], /--ramp-rates.*item 1 of "0x32" must be an integer 1\.\.500/],
    [
      ['register', ARN, '--ramp-rates', '5,1e2'],
      /--ramp-rates.*item 2 of "5,1e2" must be an integer 1\.\.500/,
    ],
    [['register', ARN, '--ramp-rates', '10,,20'], /--ramp-rates.*item 2 of "10,,20" is empty/],
    [['register', ARN, '--ramp-rates', '10,20,'], /--ramp-rates.*item 3 of "10,20," is empty/],
    [['register', ARN, '--ramp-rates', '10, 20'], /--ramp-rates.*item 2 of "10, 20" must be an integer/],
    [
      ['register', ARN, '--ramp-rates', '5,501'],
      /--ramp-rates.*item 2 of "5,501" must be an integer 1\.\.500/,
    ],
    [['redrive', 'inc-1', '--ramp-rates', '0x32'], /--ramp-rates.*item 1 of "0x32" must be an integer/],
    [['redrive', 'inc-1', '--max-rate', '1e2'], /--max-rate <n>.*must be an integer 1\.\.500, got "1e2"/],
    [['redrive', 'inc-1', '--dwell-seconds', '+30'], /--dwell-seconds <s>.*must be an integer 1\.\.3600/],
    [
      ['redrive', 'inc-1', '--verify-margin-seconds', '-0'],
      /--verify-margin-seconds <s>.*must be an integer 0\.\.3600/,
    ],
    [
      ['redrive', 'inc-1', '--sample-size', '5.0'],
      /--sample-size <n>.*must be an integer 1\.\.100, got "5.0"/,
    ],
    [
      ['register', ARN, '--max-redrives', '010'],
      /--max-redrives <n>.*must be an integer 1\.\.100, got "010"/,
    ],
  ])('bad arguments %j get one line naming the argument and exit code 2', async (argv, message) => {
    const out = await dlq(...argv);
    expect(out.code).toBe(2);
    expect(out.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(out.stderr).toMatch(message);
    expect(out.stdout).toBe('');
  });

  it('the binary exits 2 on a bad argument before touching any AWS endpoint', async () => {
    const out = await bin('register', 'arn:aws:sqs:us-east-1:123456789012:orders-dlq', '--sample-size', '0');
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/--sample-size <n>.*must be an integer 1\.\.100, got "0"/);
  });

  it.each([
    [['--ramp-rates', '50,5'], /^dlq: --ramp-rates: must be strictly ascending/],
    [['--dry-run', '--sample-only'], /^dlq: --dry-run, --sample-only: give at most one/],
    [['--max-rate', '100', '--ramp-rates', '5,200'], /^dlq: --ramp-rates: must not exceed maxRate 100/],
    [
      ['--allow-custom-destination-for-shared-dlq'],
      /^dlq: --allow-custom-destination-for-shared-dlq: only applies together with destinationArn/,
    ],
  ])(
    'dlq redrive refuses the bad flags %j naming the flag before it reads the incident (no AWS endpoint reached)',
    async (flags, message) => {
      const sfn = ['--state-machine-arn', 'arn:aws:states:us-east-1:123456789012:stateMachine:dlq-redrive'];
      const out = await bin('redrive', 'inc-that-does-not-exist', ...sfn, ...flags);
      expect([out.code, out.stdout]).toEqual([2, '']);
      expect(out.stderr).toMatch(message);
    },
  );
});

describe('dlq --version and repeated flags', () => {
  it('dlq --version prints the root package version and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    const out = await bin('--version');
    expect([out.code, out.stdout.trim()]).toEqual([0, version]);
  });

  it('the binary refuses a repeated --sample-size with exit 2, naming the flag, before any AWS call', async () => {
    const out = await bin('redrive', 'X', '--sample-size', '5', '--sample-size', '6');
    expect([out.code, out.stdout]).toEqual([2, '']);
    expect(out.stderr).toMatch(/^dlq: --sample-size: /);
  });

  it.each([
    [['redrive', 'X', '--sample-size', '5', '--sample-size', '6'], '--sample-size', ['5', '6']],
    [['incidents', '--limit', '3', '--limit', '4'], '--limit', ['3', '4']],
    [['register', ARN, '--owner', 'a', '--owner', 'b'], '--owner', ['a', 'b']],
    [
      ['watch', 'run-1', '--state-machine-arn', SFN_ARN, '--state-machine-arn', SFN_ARN],
      '--state-machine-arn',
      [SFN_ARN, SFN_ARN],
    ],
  ])('%j is refused as repeated-option %s with both values', async (argv, option, values) => {
    const program = buildProgram(contextFromEnv(quietIO(), { AWS_REGION: 'us-east-1' }));
    const error = await program.parseAsync(argv, { from: 'user' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RepeatedOptionError);
    const e = error as RepeatedOptionError;
    expect([e.code, e.option, e.values, e.exitCode]).toEqual(['repeated-option', option, values, 2]);
  });

  it('every single-value option of every command refuses a second value; repeatable ones take it', () => {
    const program = buildProgram(contextFromEnv(quietIO(), { AWS_REGION: 'us-east-1' }));
    const refused: string[] = [];
    const accepted: string[] = [];
    for (const command of program.commands)
      for (const option of command.options) {
        if (!option.required || !option.parseArg) continue;
        command.setOptionValueWithSource(option.attributeName(), 'first', 'cli');
        try {
          option.parseArg('second', ['first']);
          accepted.push(`${command.name()} ${option.long}`);
        } catch (error) {
          if (error instanceof RepeatedOptionError && error.option === option.long)
            refused.push(`${command.name()} ${option.long}`);
        }
      }
    expect(accepted.sort()).toEqual([
      'envelopes --cause',
      'redrive --cause',
      'register --approver',
      'unpark --cause',
    ]);
    expect(refused).toContain('redrive --sample-size');
    expect(refused).toContain('cancel --state-machine-arn');
    expect(refused).toHaveLength(
      program.commands.reduce((n, c) => n + c.options.filter((o) => o.required).length, 0) - accepted.length,
    );
  });
});

describe('ARNs on the command line', () => {
  it.each([
    [['redrive', 'inc-1', '--state-machine-arn', 'not-an-arn']],
    [['unpark', 'inc-1', '--state-machine-arn', 'arn:aws:sqs:us-east-1:123456789012:orders-dlq']],
    [['watch', 'run-1', '--state-machine-arn', 'arn:aws:states:us-east-1:1234:stateMachine:x']],
    [['cancel', 'run-1', '--state-machine-arn', 'dlq-redrive']],
  ])('%j exits 2 naming --state-machine-arn and its shape, before any AWS call', async (argv) => {
    const out = await bin(...argv);
    expect([out.code, out.stdout]).toEqual([2, '']);
    expect(out.stderr).toMatch(
      /^dlq: option '--state-machine-arn <arn>' argument .* must be a state machine ARN \(arn:aws:states:<region>:<account-id>:stateMachine:<name>/,
    );
  });

  it.each([
    [['redrive', 'inc-1', '--destination-arn', 'orders'], '--destination-arn'],
    [['register', ARN, '--parking-queue-arn', 'arn:aws:sns:us-east-1:123456789012:t'], '--parking-queue-arn'],
  ])('%j exits 2 naming %s as an SQS ARN, before any AWS call', async (argv, flag) => {
    const out = await bin(...argv);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`option '${flag} <arn>'`);
    expect(out.stderr).toContain('must be an SQS ARN (arn:aws:sqs:<region>:<account-id>:<queue-name>)');
  });
});

/** An IO that drops everything (the program is only parsed). */
function quietIO() {
  return { stdout: { write: () => true }, stderr: { write: () => true } };
}

describe('envelope export encoding', () => {
  it('keeps a UTF-8 body as text and round-trips it byte for byte', () => {
    const bytes = Buffer.from('{"note":"naïve ☃ 𝄞"}', 'utf8');
    const encoded = encodeBody(bytes);
    expect(encoded.bodyEncoding).toBe('utf8');
    expect(decodeBody(encoded).equals(bytes)).toBe(true);
  });

  it('writes bytes that are not valid UTF-8 as base64, and they decode to the same bytes', () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0xc3, 0x28, 0x7d]);
    const encoded = encodeBody(bytes);
    expect(encoded).toEqual({ bodyEncoding: 'base64', body: bytes.toString('base64') });
    expect(decodeBody(encoded).equals(bytes)).toBe(true);
  });

  it('keeps a leading byte-order mark (the body is not normalised)', () => {
    const bytes = Buffer.from([0xef, 0xbb, 0xbf, 0x41]);
    expect(decodeBody(encodeBody(bytes)).equals(bytes)).toBe(true);
  });
});
