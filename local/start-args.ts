/**
 * `npm start`'s command line (local/main.ts), parsed and checked before anything heavy is
 * imported: this module imports no AWS SDK, no stack and no scenario, so a bad flag exits 2 naming
 * it in well under a second. The scenario's name is checked against the scenarios once they are
 * loaded (local/start-run.ts), still before any stack starts.
 */
import { decimalInt } from '../cli/args.js';
import { approverFlags } from './approver-flags.js';

/** What `npm start` was asked to do. */
export interface StartArgs {
  json: boolean;
  messages: number | undefined;
  /** `--dlq-depth`: seed the DLQ straight with this many messages. */
  dlqDepth: number | undefined;
  /** `--scenario NAME`; undefined: the default scenario. */
  scenarioName: string | undefined;
  /** `--help` or `--scenario list`: print the usage and the scenarios, and exit 0. */
  help: boolean;
}

/** A bad command line: exit code 2, the message names the flag. */
export class UsageError extends Error {}

const FLAGS = new Set(['--json', '--approve', '--reject', '--verbose', '--help']);
const WITH_VALUE = new Set(['--messages', '--dlq-depth', '--approve-via', '--scenario']);

/** The largest incident a local run takes (`--messages`, `--dlq-depth`). */
const MAX_MESSAGES = 100_000;

export const USAGE = `usage: npm start -- [--scenario NAME|list] [--json] [--approve|--reject|--approve-via NAME] [--messages N | --dlq-depth N] [--verbose]`;

/** The integer value of a count flag, 20..100,000. @throws UsageError naming the flag. */
function countFlag(argv: readonly string[], flag: string): number | undefined {
  const at = argv.indexOf(flag);
  if (at < 0) return undefined;
  const value = decimalInt(argv[at + 1] as string, 20, MAX_MESSAGES);
  if (typeof value === 'string') throw new UsageError(`${flag}: ${value}`);
  return value;
}

/**
 * Parses `npm start`'s arguments (without the node and script paths).
 * @throws UsageError naming the flag when a flag is unknown, given twice, lacks its value, is out
 * of range or conflicts with another.
 */
export function parseStartArgs(argv: readonly string[]): StartArgs {
  const seen = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    if (seen.has(flag)) throw new UsageError(`${flag}: given twice (give it once)`);
    seen.add(flag);
    if (WITH_VALUE.has(flag)) {
      if (argv[i + 1] === undefined || argv[i + 1]?.startsWith('--'))
        throw new UsageError(`${flag}: needs a value`);
      i += 1;
    } else if (!FLAGS.has(flag))
      throw new UsageError(`${flag}: unknown flag (known: ${[...FLAGS, ...WITH_VALUE].join(', ')})`);
  }
  const messages = countFlag(argv, '--messages');
  const dlqDepth = countFlag(argv, '--dlq-depth');
  if (messages !== undefined && dlqDepth !== undefined)
    throw new UsageError(
      '--dlq-depth: give either --messages (orders through the failing consumer) or --dlq-depth (a DLQ seeded straight), not both',
    );
  try {
    approverFlags(argv);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const scenarioName = argv.includes('--scenario')
    ? (argv[argv.indexOf('--scenario') + 1] as string)
    : undefined;
  const help = argv.includes('--help') || scenarioName === 'list';
  return { json: argv.includes('--json'), messages, dlqDepth, scenarioName, help };
}
