/**
 * The run of `npm start` (local/main.ts loads it once the flags have passed): the scenario on a
 * local stack, its progress displays, its report and exit code.
 */
import { createInventorySessionStore } from '#inventory/inventory-session.js';
import { approverFromArgs } from './approver.js';
import { nextSteps } from './demo/next-steps.js';
import { type PhaseProgress, rampDisplay, startPhaseProgress } from './demo/progress.js';
import { queueDepth } from './demo/queues.js';
import { exitCodeOf, formatReport } from './demo/report.js';
import { type PhaseContext, type RunPhase, runScenario } from './demo/run-scenario.js';
import { DEFAULT_SCENARIO, listScenarios, scenarioNamed } from './demo/scenarios/index.js';
import { LOCAL_STACK_ENV, startLocalStack } from './stack.js';
import { type StartArgs, USAGE } from './start-args.js';

/**
 * Runs the scenario `args` names on a local stack (its own, or `npm run local`'s) and prints its
 * report; `args` has passed local/start-args.ts.
 *
 * @returns the exit code: 0 the run ended as its scenario expects, 1 it did not, 2 an unknown
 * scenario or approver, or --dlq-depth for a scenario it cannot seed (nothing started).
 */
export async function runStart(args: StartArgs, argv: readonly string[]): Promise<number> {
  if (args.help) {
    process.stdout.write(`${USAGE}\n\nScenarios:\n${listScenarios()}\n`);
    return 0;
  }
  const scenario = scenarioNamed(args.scenarioName ?? DEFAULT_SCENARIO);
  if (!scenario) {
    process.stderr.write(
      `--scenario: unknown scenario "${args.scenarioName}" (run --scenario list to see them)\n${USAGE}\n`,
    );
    return 2;
  }
  // --dlq-depth seeds the DLQ of a standard SQS source queue (local/demo/seed.ts): an SNS,
  // EventBridge or Lambda origin's DLQ, or a FIFO DLQ, has no such seeding (it ignored the flag, or
  // failed after the stack started).
  const setup = scenario.incident(args.messages);
  const unseeded =
    setup.origin && setup.origin !== 'sqs'
      ? `its ${setup.origin} origin`
      : setup.fifo
        ? 'its FIFO message groups'
        : '';
  if (args.dlqDepth !== undefined && unseeded) {
    process.stderr.write(
      `--dlq-depth: scenario ${scenario.name} fills its DLQ through ${unseeded}, which --dlq-depth does not seed: give --messages N\n${USAGE}\n`,
    );
    return 2;
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
  const stack = shared ? undefined : await startLocalStack({ ...scenario.stack });
  const ramp = rampDisplay({ say });
  let phase: PhaseProgress | undefined;
  // One display at a time, in the order the phases start; the ramp's ends when Reconcile starts.
  let phases = Promise.resolve();
  const nextPhase = (start: () => PhaseProgress | undefined, rampOver = false) => {
    phases = phases.then(async () => {
      const ending = phase;
      phase = undefined;
      await ending?.stop();
      if (rampOver) await ramp.stop();
      phase = start();
    });
    return phases;
  };
  const endPhase = () => nextPhase(() => undefined);
  try {
    const report = await runScenario(scenario, {
      ...(args.messages !== undefined ? { messages: args.messages } : {}),
      ...(args.dlqDepth !== undefined ? { dlqDepth: args.dlqDepth } : {}),
      ...(stack ? { standins: stack.standins } : {}),
      approver,
      say,
      onPhase: (next, ctx) => {
        void nextPhase(() => phaseDisplay(next, ctx), next === 'reconcile' || next === 'done');
      },
      onTaskResult: (state, result, ctx) =>
        ramp.onTaskResult(state, result as Record<string, unknown>, ctx.sqs, ctx.incident.queues.dlqUrl),
    });
    await endPhase();
    await ramp.stop();
    say(formatReport(report));
    say(nextSteps(report.incidentId, shared));
    if (args.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    return exitCodeOf(report);
  } finally {
    await endPhase();
    await ramp.stop();
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
