/**
 * `dlq`: the operator's command-line tool for the dlq-redrive pipeline. Works against AWS or the
 * local stack (`npm run local`) through the SDK's standard variables; see docs/cli.md.
 *
 * Every command has `--help` and `--json`; `dlq --version` prints the package version; a
 * single-value option given twice is refused. Exit codes: 0 done, 1 the operation failed or found
 * nothing, 2 a bad argument (one line naming it; nothing was read, started or written).
 */
import { Command, CommanderError } from 'commander';
import { errorMessage } from '#platform/errors.js';
import pkg from '../package.json' with { type: 'json' };
import { refuseRepeatedOptions } from './args.js';
import { envelopesCommand } from './commands/envelopes.js';
import { incidentsCommand } from './commands/incidents.js';
import { registrationCommands } from './commands/registrations.js';
import { runCommands } from './commands/runs.js';
import { showCommand } from './commands/show.js';
import { type CliContext, contextFromEnv } from './context.js';
import { CliError, type CliIO } from './output.js';

/** The first line of a message (commander's and ours are one line; an SDK error may not be). */
const firstLine = (text: string) => text.trim().split('\n')[0] ?? '';

/**
 * What to do about an SDK error that only says what is missing: the Region (the SDK throws it on the
 * first call, with nothing naming the variables). Empty for any other error.
 */
export function hintFor(message: string): string {
  if (/^Region is missing/i.test(message))
    return (
      ' (set AWS_REGION. For the local stack: run `npm run local` and export the variables it prints, ' +
      'or `source` the file `npm run local -- --write-env FILE` writes; for an account: AWS_REGION and ' +
      'credentials, with TABLE_NAME and STATE_MACHINE_ARN from the pipeline stack, see docs/cli.md)'
    );
  return '';
}

/** Builds the program with every command registered on `ctx`. */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command('dlq')
    .description('triage and redrive SQS dead-letter queues with the dlq-redrive pipeline')
    .version(pkg.version, '--version', 'print the version of dlq-redrive')
    .exitOverride()
    .showHelpAfterError(false)
    .configureOutput({
      writeOut: (s) => ctx.io.stdout.write(s),
      writeErr: (s) => ctx.io.stderr.write(s),
      outputError: () => undefined,
    });
  incidentsCommand(program, ctx);
  showCommand(program, ctx);
  envelopesCommand(program, ctx);
  registrationCommands(program, ctx);
  runCommands(program, ctx);
  for (const command of program.commands) command.exitOverride().configureOutput(program.configureOutput());
  refuseRepeatedOptions(program);
  return program;
}

/**
 * Runs the CLI on `argv` (without the node and script paths) and returns the exit code.
 * Never throws: every failure is one line on stderr.
 */
export async function runCli(argv: readonly string[], io: CliIO, context?: CliContext): Promise<number> {
  try {
    const ctx = context ?? contextFromEnv(io);
    const program = buildProgram(ctx);
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.help' ||
        error.code === 'commander.version'
      )
        return 0;
      io.stderr.write(`dlq: ${firstLine(error.message).replace(/^error: /, '')}\n`);
      return 2;
    }
    if (error instanceof CliError) {
      io.stderr.write(`dlq: ${error.message}\n`);
      return error.exitCode;
    }
    const message = firstLine(errorMessage(error));
    io.stderr.write(`dlq: ${message}${hintFor(message)}\n`);
    return 1;
  }
}
