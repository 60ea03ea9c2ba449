/**
 * `npm start`: the main job on the local stack, end to end, with no AWS account, as one of the
 * named fault scenarios (local/demo/scenarios/; the default is the healthy run).
 *
 * An `orders` queue's consumer fails on poison payloads and, during a dependency outage, on healthy
 * messages too; SQS dead-letters them; the DLQ alarm fires; the real triage handler stores an
 * envelope per message and starts the redrive workflow (the real ASL, the real task handlers); the
 * workflow asks for approval; the scenario decides what happens next (the fix is deployed, or the
 * consumer stays broken, breaks again, late poison arrives...); the run ends with a table of where
 * every message ended, the exposure against its bound, and whether the run ended as expected.
 *
 * Flags: `--scenario NAME` (`list` lists them), `--json` (the report as one JSON object on the last
 * line), `--approve` / `--reject` / `--approve-via <name>` (default: prompt on a terminal,
 * auto-approve otherwise), `--messages <n>`, `--verbose` (handler logs), `--help`. Exit code 0 when
 * the run ended as its scenario expects (an expected halt is a pass), 1 when it did not, 2 for a
 * bad argument.
 */
import './demo/env.js';
import { createInventorySessionStore } from '#inventory/inventory-session.js';
import { decimalInt } from '../cli/args.js';
import { approverFromArgs } from './approver.js';
import { nextSteps } from './demo/next-steps.js';
import {
  type PhaseProgress,
  type RampProgress,
  startPhaseProgress,
  startRampProgress,
} from './demo/progress.js';
import { queueDepth } from './demo/queues.js';
import { exitCodeOf, formatReport } from './demo/report.js';
import { type PhaseContext, type RunPhase, runScenario } from './demo/run-scenario.js';
import { DEFAULT_SCENARIO, listScenarios, type Scenario, scenarioNamed } from './demo/scenarios/index.js';
import { LOCAL_STACK_ENV, startLocalStack } from './stack.js';

interface Args {
  json: boolean;
  messages: number | undefined;
  /** `--dlq-depth`: seed the DLQ straight with this many messages. */
  dlqDepth: number | undefined;
  /** undefined: `--scenario list` or `--help` (print and exit). */
  scenario: Scenario | undefined;
  help: boolean;
}

/** A bad command line: exit code 2, the message names the flag. */
class UsageError extends Error {}

const FLAGS = new Set(['--json', '--approve', '--reject', '--verbose', '--help']);
const WITH_VALUE = new Set(['--messages', '--dlq-depth', '--approve-via', '--scenario']);

/** The largest incident a local run takes (`--messages`, `--dlq-depth`). */
const MAX_MESSAGES = 100_000;

const USAGE = `usage: npm start -- [--scenario NAME|list] [--json] [--approve|--reject|--approve-via NAME] [--messages N | --dlq-depth N] [--verbose]`;

/** The integer value of a count flag, 20..100,000. @throws UsageError naming the flag. */
function countFlag(argv: readonly string[], flag: string): number | undefined {
  const at = argv.indexOf(flag);
  if (at < 0) return undefined;
  const value = decimalInt(argv[at + 1] as string, 20, MAX_MESSAGES);
  if (typeof value === 'string') throw new UsageError(`${flag}: ${value}`);
  return value;
}

/** @throws UsageError naming the flag when a flag is unknown or a value is out of range. */
function parseArgs(argv: readonly string[]): Args {
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
  const name = argv.includes('--scenario')
    ? (argv[argv.indexOf('--scenario') + 1] as string)
    : DEFAULT_SCENARIO;
  const help = argv.includes('--help') || name === 'list';
  const scenario = help ? undefined : scenarioNamed(name);
  if (!help && !scenario)
    throw new UsageError(`--scenario: unknown scenario "${name}" (run --scenario list to see them)`);
  return { json: argv.includes('--json'), messages, dlqDepth, scenario, help };
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    return 2;
  }
  if (!args.scenario) {
    process.stdout.write(`${USAGE}\n\nScenarios:\n${listScenarios()}\n`);
    return 0;
  }
  // Optional approvers register themselves when imported (`--approve-via slack`).
  if (argv.includes('--approve-via')) await import('./slack-approver.js');
  let approver: Awaited<ReturnType<typeof approverFromArgs>>;
  try {
    approver = await approverFromArgs(argv);
  } catch (error) {
    // Conflicting or unknown approver flags are usage errors too (exit 2, nothing started).
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
    return 2;
  }
  const out = args.json ? process.stderr : process.stdout;
  const say = (line: string) => out.write(`${line}\n`);

  const shared = process.env[LOCAL_STACK_ENV] === '1';
  say(
    shared
      ? `Using the local stack of npm run local (SQS ${process.env.AWS_ENDPOINT_URL_SQS}, DynamoDB ${process.env.AWS_ENDPOINT_URL_DYNAMODB}, table ${process.env.TABLE_NAME})...`
      : 'Starting the local stack (SQS stand-in + DynamoDB Local)...',
  );
  const stack = shared ? undefined : await startLocalStack({ ...args.scenario.stack });
  let progress: RampProgress | undefined;
  let phase: PhaseProgress | undefined;
  // One display at a time, in the order the phases start.
  let phases = Promise.resolve();
  const nextPhase = (start: () => PhaseProgress | undefined) => {
    phases = phases.then(async () => {
      const ending = phase;
      phase = undefined;
      await ending?.stop();
      phase = start();
    });
    return phases;
  };
  const endPhase = () => nextPhase(() => undefined);
  try {
    const report = await runScenario(args.scenario, {
      ...(args.messages !== undefined ? { messages: args.messages } : {}),
      ...(args.dlqDepth !== undefined ? { dlqDepth: args.dlqDepth } : {}),
      ...(stack ? { standins: stack.standins } : {}),
      approver,
      say,
      onPhase: (next, ctx) => {
        void nextPhase(() => phaseDisplay(next, ctx));
      },
      onTaskResult: (state, result, ctx) => {
        const r = result as Record<string, unknown>;
        if (state !== 'StartMoveTask' && state !== 'StepUp' && state !== 'CheckProgress') return;
        if (!progress && state === 'StartMoveTask' && r.taskHandle)
          progress = startRampProgress(
            ctx.sqs,
            ctx.incident.queues.dlqUrl,
            Number(r.toMove) > 0 ? Number(r.toMove) : undefined,
          );
        progress?.setTaskRate(Number(r.rate), Number(r.rateIndex));
      },
    });
    await endPhase();
    if (progress) {
      const moved = await progress.stop();
      progress = undefined;
      const arrived =
        moved.arrived > 0
          ? ` ${moved.arrived} more arrived in the DLQ meanwhile (counted apart, not in the total).`
          : '';
      say(`Ramp: ${moved.moved}/${moved.total} left the DLQ while the move task ran.${arrived}`);
    }
    say(formatReport(report));
    say(nextSteps(report.incidentId, shared));
    if (args.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    return exitCodeOf(report);
  } finally {
    await endPhase();
    await progress?.stop();
    await stack?.stop();
  }
}

/**
 * The progress display of a phase that can take more than a few seconds (the ramp has its own,
 * started by its first move task): seeding (DLQ depth), inventory (the session's count), park
 * (the parking queue's depth), the verification wait, reconcile (elapsed time).
 */
function phaseDisplay(phase: RunPhase, ctx: PhaseContext): PhaseProgress | undefined {
  switch (phase) {
    case 'seeding': {
      let seeded = 0;
      ctx.seeded = (n) => {
        seeded = n;
      };
      return startPhaseProgress('seeding', async () => ({ done: seeded, total: ctx.total }));
    }
    case 'inventory': {
      const sessions = createInventorySessionStore();
      return startPhaseProgress('inventory', async () => {
        const session = ctx.incidentId ? await sessions.get(ctx.queues.dlqArn, ctx.incidentId) : undefined;
        return {
          done: session?.inventoried ?? 0,
          total: session?.depthAtStart ?? ctx.total,
          note: session
            ? `(${session.status.toLowerCase()}, ${session.held} held, ${session.invocations} invocations)`
            : '',
        };
      });
    }
    case 'park':
      return startPhaseProgress('park', async () => ({
        done: (await queueDepth(ctx.sqs, ctx.queues.parkingUrl)).visible,
        note: 'in the parking queue',
      }));
    case 'verify': {
      const started = Date.now();
      const wait = ctx.waitSeconds ?? 0;
      return startPhaseProgress(
        'verify',
        async () => ({
          done: Math.min(wait, Math.floor((Date.now() - started) / 1000)),
          total: wait,
          note: 'verification window',
        }),
        { unit: 's' },
      );
    }
    case 'reconcile': {
      const started = Date.now();
      return startPhaseProgress(
        'reconcile',
        async () => ({
          done: Math.floor((Date.now() - started) / 1000),
          note: 'every envelope in exactly one state',
        }),
        { unit: 's' },
      );
    }
    default:
      return undefined;
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`npm start failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
