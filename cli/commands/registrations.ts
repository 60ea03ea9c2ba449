/**
 * `dlq register` / `dlq registrations`: write or list queue registrations (`DLQ#<dlqArn>` /
 * `CONFIG`) for queues owned outside the CDK app, through the same schema and the same item as
 * the `MonitoredDlq` construct (`QueueRegistration`, `registrationItem`). A registration that does
 * not parse is refused naming each field, and nothing is written.
 *
 * The registration only configures the pipeline for the DLQ; the alarm and the IAM grants that
 * let the pipeline read and move its messages still come from the construct (or the equivalent
 * CloudFormation in the owner's account): docs/cli.md says what to add.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { QueueRegistration } from '#inventory/model.js';
import { formatIssues } from '#platform/middleware.js';
import { collect, intArg, intListArg, sqsArnArg } from '../args.js';
import type { CliContext } from '../context.js';
import { CliError, formatTable, printJson } from '../output.js';

interface RegisterOptions {
  file?: string;
  owner?: string;
  slackChannel?: string;
  approver?: string[];
  producerKeyAttribute?: string;
  producerKeyJsonPath?: string;
  sampleSize?: number;
  rampRates?: number[];
  dwellSeconds?: number;
  maxRedrives?: number;
  parkingQueueArn?: string;
  allowPreApproved?: boolean;
  json?: boolean;
}

/** The registration the flags (over the file's fields) describe; not yet validated. */
async function registrationFrom(
  dlqArn: string | undefined,
  opts: RegisterOptions,
): Promise<Record<string, unknown>> {
  let base: Record<string, unknown> = {};
  if (opts.file !== undefined) {
    let text: string;
    try {
      text = await readFile(opts.file, 'utf8');
    } catch (error) {
      throw new CliError(`--file: cannot read ${opts.file}: ${(error as Error).message}`, 2);
    }
    try {
      base = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new CliError(`--file: ${opts.file} is not JSON`, 2);
    }
    if (typeof base !== 'object' || base === null || Array.isArray(base))
      throw new CliError(`--file: ${opts.file} must hold one JSON object (a queue registration)`, 2);
  }
  if (opts.producerKeyAttribute !== undefined && opts.producerKeyJsonPath !== undefined)
    throw new CliError('--producer-key-attribute, --producer-key-json-path: give at most one', 2);
  const fields: Record<string, unknown> = {
    dlqArn,
    owner: opts.owner,
    slackChannel: opts.slackChannel,
    approvers: opts.approver,
    producerKey:
      opts.producerKeyAttribute !== undefined
        ? { attribute: opts.producerKeyAttribute }
        : opts.producerKeyJsonPath !== undefined
          ? { jsonPath: opts.producerKeyJsonPath }
          : undefined,
    sampleSize: opts.sampleSize,
    rampRates: opts.rampRates,
    dwellSeconds: opts.dwellSeconds,
    maxRedrives: opts.maxRedrives,
    parkingQueueArn: opts.parkingQueueArn,
    allowPreApproved: opts.allowPreApproved,
  };
  return { ...base, ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) };
}

/** Registers both commands. */
export function registrationCommands(program: Command, ctx: CliContext): void {
  program
    .command('register')
    .description('write a queue registration (same schema as the MonitoredDlq construct)')
    .argument('[dlq-arn]', 'the DLQ ARN (or dlqArn in --file)', sqsArnArg)
    .option('--file <registration.json>', 'a JSON queue registration; flags override its fields')
    .option('--owner <team>', 'the owning team')
    .option('--slack-channel <id>', 'Slack channel id for approvals and reports')
    .option('--approver <slack-user-id>', 'a Slack user allowed to approve (repeatable)', collect)
    .option('--producer-key-attribute <name>', "message attribute holding the producer's id")
    .option('--producer-key-json-path <$.path>', "JSON path of the producer's id in the body")
    .option('--sample-size <n>', 'messages redriven one by one first (1..100)', intArg(1, 100))
    .option('--ramp-rates <r1,r2,...>', 'move task rates, msg/s, ascending, each 1..500', intListArg(1, 500))
    .option(
      '--dwell-seconds <s>',
      "seconds per ramp step (1..3600); a move task's step lasts at least one return window (the destination's visibility timeout x maxReceiveCount + margin)",
      intArg(1, 3600),
    )
    .option('--max-redrives <n>', 'redrives after which a message is parked (1..100)', intArg(1, 100))
    .option('--parking-queue-arn <arn>', 'where poison messages are parked', sqsArnArg)
    .option('--allow-pre-approved', 'accept console starts that name approvedBy')
    .option('--json', 'print the stored registration as JSON')
    .action(async (dlqArn: string | undefined, opts: RegisterOptions) => {
      const raw = await registrationFrom(dlqArn, opts);
      const parsed = QueueRegistration.safeParse(raw);
      if (!parsed.success)
        throw new CliError(`invalid registration: ${formatIssues(parsed.error).join('; ')}`, 2);
      const stored = await ctx.registry.putRegistration(parsed.data);
      if (opts.json) return printJson(ctx.io, stored);
      ctx.io.stdout.write(`registered ${stored.dlqArn}\n`);
    });

  program
    .command('registrations')
    .description('list queue registrations (construct and CLI)')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const all = await ctx.registry.listRegistrations();
      if (opts.json) return printJson(ctx.io, all);
      ctx.io.stdout.write(
        `${formatTable(
          ['DLQ', 'OWNER', 'CHANNEL', 'APPROVERS', 'SAMPLE', 'RAMP', 'DWELL', 'PARKING'],
          all.map((r) =>
            'registration' in r
              ? [
                  r.registration.dlqArn,
                  r.registration.owner ?? '-',
                  r.registration.slackChannel ?? '-',
                  String(r.registration.approvers.length),
                  String(r.registration.sampleSize),
                  r.registration.rampRates.join(','),
                  `${r.registration.dwellSeconds} s`,
                  r.registration.parkingQueueArn ?? '-',
                ]
              : [r.dlqArn, `INVALID: ${r.problems.join('; ')}`, '', '', '', '', '', ''],
          ),
        )}\n${all.length} registration(s)\n`,
      );
    });
}
