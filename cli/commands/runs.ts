/**
 * `dlq redrive`, `dlq watch`, `dlq cancel`: start a redrive of an incident (validated input,
 * idempotent name), follow a run until it ends, stop one.
 *
 * `dlq cancel` records a cancel request on the run (the ramp's next health gate reads it, cancels
 * the move task and ends the run `Cancelled`, reconciled), cancels the run's move task at once so
 * nothing more moves meanwhile, and waits for the run to end. A run still waiting for its approval
 * has moved nothing: it is stopped (StopExecution) and its workflow lease released at once.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CancelMessageMoveTask.html
 */
import { createHash } from 'node:crypto';
import { StartExecutionCommand, StopExecutionCommand } from '@aws-sdk/client-sfn';
import type { Command } from 'commander';
import { auditPlanOf } from '#incident/audit-trail.js';
import { createCancelRequests } from '#incident/cancel-requests.js';
import { ExecutionInput, parseSqsArn } from '#incident/execution-input.js';
import { recordRunOnIncident, statusAfterRun } from '#incident/notifier.js';
import { createWorkflowLeaseStore } from '#incident/workflow-lease.js';
import { tableAccess } from '#platform/clients.js';
import { clockText, formatDuration } from '#platform/clock-text.js';
import { formatIssues } from '#platform/middleware.js';
import { createMoveTasks } from '#transfer/move-tasks.js';
import type { RampForecast } from '#transfer/redrive-plan.js';
import { collect, intArg, intListArg, nameArg, sqsArnArg, stateMachineArnArg } from '../args.js';
import { type CliContext, requireIncident } from '../context.js';
import { executionArnFrom, incidentOf, type RunView, readRun, sleep } from '../executions.js';
import { CliError, formatFields, printJson } from '../output.js';
import { startProgress } from '../progress.js';
import { checkCauses } from './envelopes.js';

interface RedriveOptions {
  unpark?: boolean;
  dryRun?: boolean;
  sampleOnly?: boolean;
  cause?: string[];
  sampleSize?: number;
  rampRates?: number[];
  maxRate?: number;
  dwellSeconds?: number;
  verifyMarginSeconds?: number;
  destinationArn?: string;
  allowCustomDestinationForSharedDlq?: boolean;
  discardPoison?: boolean;
  approvedBy?: string;
  by?: string;
  name?: string;
  stateMachineArn?: string;
  watch?: boolean;
  json?: boolean;
}

/** The CLI flag of an execution input field (`sampleSize` -> `--sample-size`, `selection` -> `--cause`). */
const flagOf = (field: string) =>
  field === 'selection' ? '--cause' : `--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/**
 * Waits for the run to leave ValidateInput. A refusal there (checks only the pipeline can make:
 * the registration, the Region, whether the queues exist, whether it runs the recording mover)
 * becomes one line naming the flag and exit 2: the execution failed at its first state, before
 * any queue or table was read or written.
 */
async function validated(ctx: CliContext, executionArn: string): Promise<RunView> {
  // Until a state past the refusal path is entered, the run may still end refused (RecordFailure
  // runs while the execution is RUNNING).
  const refusalPath = new Set(['ValidateInput', 'RecordFailure', 'Failed']);
  for (;;) {
    const run = await readRun(ctx, executionArn);
    if (run.status !== 'RUNNING' || run.path.some((p) => !refusalPath.has(p.name))) {
      if (run.status === 'FAILED' && run.path.every((p) => refusalPath.has(p.name))) {
        const cause = run.taskOutputs.RecordFailure?.text ?? run.cause ?? run.error ?? 'refused';
        const message = String(cause).replace(/^.*?invalid execution input: /, '');
        const first = message.split('; ')[0] ?? message;
        const field = first.split(':')[0] ?? '';
        throw new CliError(
          `${/^[a-zA-Z]+$/.test(field) ? flagOf(field) : field}:${first.slice(field.length + 1)} (execution ${run.name} failed at ValidateInput; nothing was read or moved)`,
          2,
        );
      }
      return run;
    }
    await sleep(250);
  }
}

/**
 * The execution input for `dlq redrive`, checked with the workflow's own schema (the same one
 * ValidateInput applies), so a bad value is refused here naming its flag, before anything starts.
 *
 * @throws CliError (exit 2) naming the flag.
 */
export function redriveInput(
  incident: { incidentId: string; dlqArn: string },
  opts: RedriveOptions,
  requestedBy: string,
): Record<string, unknown> {
  if (opts.dryRun && opts.sampleOnly) throw new CliError('--dry-run, --sample-only: give at most one', 2);
  const input: Record<string, unknown> = Object.fromEntries(
    Object.entries({
      dlqArn: incident.dlqArn,
      incidentId: incident.incidentId,
      mode: opts.dryRun ? 'dry-run' : opts.sampleOnly ? 'sample-only' : undefined,
      sampleSize: opts.sampleSize,
      rampRates: opts.rampRates,
      maxRate: opts.maxRate,
      dwellSeconds: opts.dwellSeconds,
      verifyMarginSeconds: opts.verifyMarginSeconds,
      destinationArn: opts.destinationArn,
      allowCustomDestinationForSharedDlq: opts.allowCustomDestinationForSharedDlq,
      discardPoison: opts.discardPoison,
      approvedBy: opts.approvedBy,
      requestedBy,
    }).filter(([, v]) => v !== undefined),
  );
  // Selection and un-park go through the recording mover (a move task cannot filter).
  if (opts.cause && opts.cause.length > 0) input.selection = { causes: opts.cause };
  if (opts.unpark) input.unpark = true;
  const parsed = ExecutionInput.safeParse(input);
  if (!parsed.success) {
    const first = formatIssues(parsed.error)[0] ?? 'invalid input';
    const field = first.split(':')[0] ?? '';
    throw new CliError(
      `${field in input ? flagOf(field.split('.')[0] as string) : field}:${first.slice(field.length + 1)}`,
      2,
    );
  }
  return input;
}

/**
 * A stand-in DLQ ARN for checking the flags before the incident is read: of the destination's
 * queue type, and not the destination, so only the checks that depend on the real DLQ (its type
 * against the destination's, the destination being the DLQ itself) wait for the incident.
 */
function flagCheckDlqArn(destinationArn: string | undefined): string {
  const fifo = destinationArn?.endsWith('.fifo') ?? false;
  const at = destinationArn === undefined ? undefined : parseSqsArn(destinationArn);
  return `arn:${at?.partition ?? 'aws'}:sqs:${at?.region ?? 'us-east-1'}:000000000000:dlq-redrive-flag-check${fifo ? '.fifo' : ''}`;
}

/**
 * The execution name of the `n`-th CLI start of an incident: `<incident>-cli<n>-<8 hex of the
 * input>`. The same command retried (a lost response) sends the same name and input, which Step
 * Functions answers with the running execution instead of a second run.
 */
export function redriveExecutionName(incidentId: string, n: number, input: Record<string, unknown>): string {
  const hash = createHash('sha256').update(JSON.stringify(input)).digest('hex').slice(0, 8);
  const suffix = `-cli${n}-${hash}`;
  return `${incidentId.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 80 - suffix.length)}${suffix}`;
}

/** One line per state entered, and the ramp's progress, until the run ends. */
async function follow(ctx: CliContext, executionArn: string, quiet: boolean): Promise<RunView> {
  let seen = 0;
  let bar: ReturnType<typeof startProgress> | undefined;
  let run = await readRun(ctx, executionArn);
  for (;;) {
    if (!quiet) {
      for (const step of run.path.slice(seen)) {
        bar?.stop();
        bar = undefined;
        ctx.io.stderr.write(`${step.at ? clockText(step.at.getTime(), ctx.now()) : '-'}  ${step.name}\n`);
      }
      seen = run.path.length;
      const toMove = Number(run.ramp?.toMove ?? 0);
      if (run.status === 'RUNNING' && run.ramp && toMove > 0) {
        bar ??= startProgress(
          ctx.io,
          toMove,
          'ramp |{bar}| {value}/{total} moved | {rate} msg/s | {decision}',
        );
        bar.setTotal(toMove);
        bar.update(Number(run.ramp.movedBefore ?? 0) + Number(run.ramp.moved ?? 0), {
          rate: Number(run.ramp.rate ?? 0),
          decision: String(run.ramp.decision ?? ''),
        });
      }
    }
    if (run.status !== 'RUNNING') break;
    await sleep(1000);
    run = await readRun(ctx, executionArn);
  }
  bar?.stop();
  return run;
}

/** The run's end, as labelled lines. */
function runSummary(run: RunView, now: number): string {
  const r = run.reconcile ?? {};
  const labels: Record<string, string> = {
    inDlq: 'still in DLQ',
    inFlight: 'in flight',
    lateArrivals: 'late arrivals',
    returned: 'returned copies',
  };
  const counts = [
    'inventoried',
    'lateArrivals',
    'returned',
    'redriven',
    'parked',
    'discarded',
    'inDlq',
    'inFlight',
    'missing',
    'lost',
  ]
    .filter((k) => typeof r[k] === 'number' && (r[k] !== 0 || !(k in labels) || k === 'inDlq'))
    .map((k) => `${r[k]} ${labels[k] ?? k}`);
  const text = run.taskOutputs.Notify?.text;
  const checks = run.taskOutputs.CheckDlqStillHasMessages ?? run.taskOutputs.Preflight;
  const forecast = checks?.forecast as RampForecast | undefined;
  const warnings = Array.isArray(checks?.warnings) ? (checks.warnings as unknown[]).map(String) : [];
  return formatFields([
    ['execution', `${run.name} (${run.status}, ended in ${run.currentState ?? '?'})`],
    ['started', run.startDate ? clockText(run.startDate.getTime(), now) : '-'],
    ['ended', run.stopDate ? clockText(run.stopDate.getTime(), now) : '-'],
    ...(run.startDate && run.stopDate
      ? ([['duration', formatDuration(run.stopDate.getTime() - run.startDate.getTime())]] as Array<
          [string, string]
        >)
      : []),
    ['counts', counts.length > 0 ? counts.join(', ') : '-'],
    ['result', typeof text === 'string' ? text : (run.cause ?? run.error ?? '-')],
    ...(forecast ? forecastLines(forecast) : []),
    ...warnings.map((w): [string, string] => ['warning', w]),
  ]);
}

/** The plan Preflight forecast (a dry run's answer): parked, sampled, moved, each ramp step, wall time. */
function forecastLines(forecast: RampForecast): Array<[string, string]> {
  return [
    [forecast.parkTo === 'discard' ? 'discard' : 'park', String(forecast.toPark)],
    ['sample', `${forecast.sample} (then a ${forecast.verifyWindowSeconds} s verification window)`],
    ['move', `${forecast.toMove} by move task`],
    ...forecast.steps.map((step, i): [string, string] => [
      `ramp step ${i + 1}`,
      `${step.rate} msg/s, ${step.messages} messages, about ${formatDuration(step.seconds * 1000)}`,
    ]),
    ['estimated', `about ${formatDuration(forecast.estimatedSeconds * 1000)} in all`],
  ];
}

/** Registers the three commands. */
export function runCommands(program: Command, ctx: CliContext): void {
  const start = (command: Command) =>
    command
      .option(
        '--cause <cause>',
        'only these causes: fingerprint or error class (the recording mover moves them; repeatable)',
        collect,
      )
      .option('--sample-size <n>', 'messages redriven one by one first (1..100)', intArg(1, 100))
      .option(
        '--ramp-rates <r1,r2,...>',
        'move task rates, msg/s, ascending, each 1..500',
        intListArg(1, 500),
      )
      .option('--max-rate <n>', 'highest rate, msg/s (1..500)', intArg(1, 500))
      .option('--dwell-seconds <s>', 'seconds per ramp step (1..3600)', intArg(1, 3600))
      .option('--verify-margin-seconds <s>', 'added to the verification window (0..3600)', intArg(0, 3600))
      .option('--destination-arn <arn>', 'send every message to this queue instead of its source', sqsArnArg)
      .option(
        '--allow-custom-destination-for-shared-dlq',
        'confirm a destination for a DLQ shared by several sources',
      )
      .option('--discard-poison', 'delete poison/permanent messages (recorded) instead of parking them')
      .option('--approved-by <name>', 'pre-approved start (the registration must allow it)', nameArg)
      .option('--by <name>', 'who asks (requestedBy; default DLQ_OPERATOR or USER)', nameArg)
      .option('--name <execution-name>', 'execution name (default: derived, idempotent)')
      .option('--state-machine-arn <arn>', 'default STATE_MACHINE_ARN', stateMachineArnArg)
      .option('--watch', 'follow the run until it ends (exit 0 only when it succeeds)')
      .option('--json', 'print JSON');

  const startRun = async (incidentId: string, opts: RedriveOptions) => {
    if (opts.name !== undefined && !/^[A-Za-z0-9_-]{1,80}$/.test(opts.name))
      throw new CliError(`--name: must be 1-80 of A-Za-z0-9-_, got "${opts.name}"`, 2);
    const by = ctx.operator(opts.by);
    // Every flag is checked before the incident is read: a bad value is refused naming its flag
    // (exit 2) even when the incident does not exist, and nothing is read.
    redriveInput({ incidentId, dlqArn: flagCheckDlqArn(opts.destinationArn) }, opts, by);
    const stateMachineArn = ctx.stateMachineArn(opts.stateMachineArn);
    const incident = await requireIncident(ctx, incidentId);
    checkCauses(incident, opts.cause);
    const input = redriveInput(incident, opts, by);
    const previous = (await ctx.audit.list(incidentId)).filter(
      (e) => e.kind === 'run-started' && e.via === 'cli',
    );
    const name = opts.name ?? redriveExecutionName(incidentId, previous.length + 1, input);
    let executionArn: string;
    try {
      const started = await ctx
        .sfn()
        .send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }));
      executionArn = started.executionArn as string;
    } catch (error) {
      if ((error as { name?: string }).name === 'ExecutionAlreadyExists')
        throw new CliError(
          `--name: an execution named ${name} already exists with another input or has ended; give another --name`,
        );
      throw error;
    }
    const validatedRun = await validated(ctx, executionArn);
    await ctx.audit.record({
      incidentId,
      entryId: `run#${name}#started`,
      kind: 'run-started',
      at: ctx.now(),
      by,
      via: 'cli',
      executionName: name,
      // The run's plan (ValidateInput's output: the registration's defaults and maxRate applied),
      // not the flags alone, which leave out what the registration decides.
      plan: auditPlanOf(validatedRun.plan ?? { mode: 'redrive', requestedBy: by, ...input }),
      text: JSON.stringify(input),
    });
    // A dry run ends within seconds (ValidateInput, Preflight, Notify): its plan is the answer.
    if (!opts.watch && !opts.dryRun) {
      if (opts.json) return printJson(ctx.io, { executionArn, name, input });
      ctx.io.stdout.write(`started ${executionArn}\nfollow it: dlq watch ${name}\n`);
      return;
    }
    const run = await follow(ctx, executionArn, opts.json === true || !opts.watch);
    if (opts.json) printJson(ctx.io, { executionArn, name, input, run });
    else ctx.io.stdout.write(`${runSummary(run, ctx.now())}\n`);
    if (run.status !== 'SUCCEEDED')
      throw new CliError(`execution ${name} ended ${run.status} in ${run.currentState}`);
  };

  start(
    program
      .command('redrive')
      .description('start a redrive of an incident (validated input; prints the execution)')
      .argument('<incident>', 'incident id')
      .option('--dry-run', 'plan and preflight only: what would be parked, sampled and moved; nothing moves')
      .option('--sample-only', 'stop after the verified sample'),
  ).action(startRun);

  start(
    program
      .command('unpark')
      .description("bring an incident's parked messages back to their source (through the recording mover)")
      .argument('<incident>', 'incident id'),
  ).action((incidentId: string, opts: RedriveOptions) => startRun(incidentId, { ...opts, unpark: true }));

  program
    .command('watch')
    .description('follow a run until it ends: each state, the ramp as a progress bar, the outcome')
    .argument('<execution>', 'execution ARN or name')
    .option('--state-machine-arn <arn>', 'default STATE_MACHINE_ARN (to resolve a name)', stateMachineArnArg)
    .option('--json', 'print the run as JSON when it ends')
    .action(async (execution: string, opts: { stateMachineArn?: string; json?: boolean }) => {
      const arn = executionArnFrom(ctx, execution, opts.stateMachineArn);
      const run = await follow(ctx, arn, opts.json === true);
      if (opts.json) printJson(ctx.io, run);
      else ctx.io.stdout.write(`${runSummary(run, ctx.now())}\n`);
      if (run.status !== 'SUCCEEDED')
        throw new CliError(`execution ${run.name} ended ${run.status} in ${run.currentState}`);
    });

  program
    .command('cancel')
    .description('stop a run: cancel its move task and the execution, then reconcile')
    .argument('<execution>', 'execution ARN or name')
    .option('--reason <text>', 'why (kept in the audit trail)', nameArg)
    .option('--by <name>', 'who cancels (default DLQ_OPERATOR or USER)', nameArg)
    .option(
      '--wait-seconds <s>',
      'how long to wait for the run to end Cancelled (1..86400)',
      intArg(1, 86_400),
      900,
    )
    .option('--state-machine-arn <arn>', 'default STATE_MACHINE_ARN (to resolve a name)', stateMachineArnArg)
    .option('--json', 'print JSON')
    .action(
      async (
        execution: string,
        opts: { reason?: string; by?: string; waitSeconds: number; stateMachineArn?: string; json?: boolean },
      ) => {
        const arn = executionArnFrom(ctx, execution, opts.stateMachineArn);
        const before = await readRun(ctx, arn);
        if (before.status !== 'RUNNING')
          throw new CliError(
            `execution ${before.name} already ended ${before.status} in ${before.currentState}`,
          );
        const incidentId = incidentOf(before);
        if (!incidentId) throw new CliError(`execution ${before.name}: no incident id in its input or plan`);
        const by = ctx.operator(opts.by);
        const at = ctx.now();
        const table = tableAccess({ tableName: ctx.tableName });
        const asked = await createCancelRequests(table).request({
          incidentId,
          executionName: before.name,
          by,
          via: 'cli',
          at,
          reason: opts.reason ?? null,
        });
        await ctx.audit.record({
          incidentId,
          entryId: `run#${before.name}#cancel`,
          kind: 'cancel-requested',
          at,
          by,
          via: 'cli',
          executionName: before.name,
          text: opts.reason ?? null,
        });
        if (!asked.recorded && !opts.json)
          ctx.io.stderr.write(
            `cancel already requested by ${asked.existing?.by ?? '?'} at ${asked.existing ? clockText(asked.existing.at, at) : '?'}\n`,
          );
        // Nothing more moves from now on: the gate would cancel it too, at its next check.
        const handle = typeof before.ramp?.taskHandle === 'string' ? before.ramp.taskHandle : null;
        const taskCancelled = handle
          ? (await createMoveTasks({ client: ctx.sqs() }).cancel(handle)).cancelled
          : false;
        let how: string;
        let run: RunView;
        if (before.currentState === 'RequestApproval' || before.path.every((s) => s.name !== 'Park')) {
          // Before Park nothing has moved: stop the execution now and release its lease.
          await ctx.sfn().send(
            new StopExecutionCommand({
              executionArn: arn,
              error: 'Redrive.Cancelled',
              cause: `cancelled by ${by} (cli)`,
            }),
          );
          const dlqArn = before.plan?.dlqArn;
          if (typeof dlqArn === 'string')
            await createWorkflowLeaseStore(table).release(dlqArn, { incidentId, executionName: before.name });
          const text = `Redrive cancelled by ${by} before anything moved (at ${before.currentState}).`;
          await recordRunOnIncident(ctx.incidents, incidentId, {
            status: statusAfterRun('cancelled'),
            outcome: 'cancelled',
            outcomeText: text,
            runEndedBy: before.name,
          });
          await ctx.audit.record({
            incidentId,
            entryId: `run#${before.name}#ended`,
            kind: 'run-ended',
            at: ctx.now(),
            by,
            via: 'cli',
            executionName: before.name,
            outcome: 'cancelled',
            text,
          });
          how = 'stopped before anything moved';
          run = await readRun(ctx, arn);
        } else {
          if (!opts.json)
            ctx.io.stderr.write(
              `cancel requested; ${taskCancelled ? `move task ${handle} cancelled; ` : ''}waiting for the run to reconcile and end Cancelled...\n`,
            );
          const deadline = ctx.now() + opts.waitSeconds * 1000;
          run = before;
          while (run.status === 'RUNNING' && ctx.now() < deadline) {
            await sleep(1000);
            run = await readRun(ctx, arn);
          }
          if (run.status === 'RUNNING')
            throw new CliError(
              `execution ${run.name} is still running (at ${run.currentState}) after ${opts.waitSeconds} s: it ends Cancelled at its next health gate; dlq watch ${run.name} follows it`,
            );
          how = `ended in ${run.currentState}`;
        }
        if (opts.json)
          return printJson(ctx.io, { executionArn: arn, incidentId, by, taskCancelled, how, run });
        ctx.io.stdout.write(`${runSummary(run, ctx.now())}\ncancelled: ${how}\n`);
      },
    );
}
