import { ListExecutionsCommand } from '@aws-sdk/client-sfn';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '#incident/audit-trail.js';
import { auditLine, type OnCallReport } from '#incident/on-call-report.js';
import { sfnClient, sqsClient } from '#platform/clients.js';
import { contextFromEnv } from '../../cli/context.js';
import { executionArnFrom, type RunView, readRun, sleep } from '../../cli/executions.js';
import { createAlarmEvaluator } from '../../local/alarm-evaluator.js';
import { prepareIncident } from '../../local/demo/scenario.js';
import { runTriage } from '../../local/demo/triage-local.js';
import { type ServedStack, serveLocalStack } from '../../local/serve.js';
import { dlq } from '../support/cli.js';
import { queueDepth } from '../support/seed-dlq.js';

// `dlq redrive` / `watch` / `cancel` through the real SFN client against the local Step Functions
// stand-in (`npm run local`), on an incident the consumer-still-broken scenario leaves in its DLQ.
describe('dlq redrive, watch and cancel on the local stack', { timeout: 300_000 }, () => {
  let served: ServedStack;
  let incidentId: string;
  let dlqUrl: string;
  const executions = async () =>
    (await sfnClient().send(new ListExecutionsCommand({ stateMachineArn: served.stateMachineArn })))
      .executions ?? [];
  beforeAll(async () => {
    served = await serveLocalStack({ retryIntervalMs: 100 });
    // An incident whose DLQ keeps its messages: triage opens it, the workflow is started by dlq.
    const incident = await prepareIncident(sqsClient(), {
      name: 'cli-runs',
      messages: 40,
      outageAfterProcessed: 0,
    });
    await incident.consumer.stop();
    dlqUrl = incident.queues.dlqUrl;
    const alarm = await createAlarmEvaluator({
      dlqUrl: incident.queues.dlqUrl,
      queueName: 'cli-runs-dlq',
    }).evaluate();
    const triage = await runTriage(alarm, {
      startWorkflow: async ({ incidentId: id }) => ({
        executionArn: `not-started:${id}`,
        alreadyStarted: false,
      }),
    });
    incidentId = triage.queues[0]?.incidentId as string;
    expect(incident.dlqDepth).toBe(40);
  });
  afterAll(async () => {
    await served?.stop();
  });

  it('--cause starts a recording-mover run (a dry run here: Preflight counts N of M, nothing moves); unpark with nothing parked is refused by Preflight naming unpark', async () => {
    const ctx = contextFromEnv({ stdout: { write: () => true }, stderr: { write: () => true } });
    const ended = async (name: string): Promise<RunView> => {
      const arn = executionArnFrom(ctx, name);
      let run = await readRun(ctx, arn);
      while (run.status === 'RUNNING') {
        await sleep(200);
        run = await readRun(ctx, arn);
      }
      return run;
    };
    const causes = (await dlq('show', incidentId, '--json')).json<OnCallReport>().topCauses;
    const outage = causes.find((c) => c.errorClass === 'DependencyUnavailable');
    const run = await dlq('redrive', incidentId, '--cause', 'DependencyUnavailable', '--dry-run', '--json');
    expect([run.code, run.stderr]).toEqual([0, '']);
    const dry = await ended(run.json<{ name: string }>().name);
    expect([dry.status, dry.currentState]).toEqual(['SUCCEEDED', 'Done']);
    expect(dry.taskOutputs.Preflight).toMatchObject({
      ok: true,
      path: 'mover',
      selection: { selected: outage?.count, total: 40 },
    });
    const unpark = await dlq('unpark', incidentId, '--json');
    expect(unpark.code).toBe(0);
    const nothingParked = await ended(unpark.json<{ name: string }>().name);
    expect([nothingParked.status, nothingParked.currentState]).toEqual(['FAILED', 'RedriveRefused']);
    expect(String(nothingParked.taskOutputs.Preflight?.refusal)).toMatch(/^redrive refused: unpark: /);
    expect((await queueDepth(sqsClient(), dlqUrl)).visible).toBe(40);
    expect((await executions()).map((e) => e.status).sort()).toEqual(['FAILED', 'SUCCEEDED']);
    // The audit trail's start lines carry the plan each run followed (ValidateInput's: the
    // registration's sample size and ramp), and an un-park run reads as one.
    const audit = (await dlq('show', incidentId, '--json')).json<OnCallReport>().audit;
    const started = (name: string) =>
      audit.find((e) => e.kind === 'run-started' && e.executionName === name) as AuditEntry;
    const dryStart = started(dry.name);
    expect(dryStart.plan).toMatchObject({ mode: 'dry-run', sampleSize: 5, rampRates: [5, 50, 200] });
    expect(auditLine(dryStart, Date.now())).toMatch(
      /; plan dry-run, sample 5, 5 -> 50 -> 200 msg\/s, 2 s per step/,
    );
    expect(started(nothingParked.name).plan).toMatchObject({ mode: 'unpark', rampRates: [5, 50, 200] });
  });

  it('bad arguments exit 2 with one line naming the argument, and start nothing', async () => {
    for (const [argv, message] of [
      [['redrive', incidentId, '--ramp-rates', '50,5'], /^dlq: --ramp-rates: must be strictly ascending/],
      [
        ['redrive', incidentId, '--dry-run', '--sample-only'],
        /^dlq: --dry-run, --sample-only: give at most one/,
      ],
      [['redrive', incidentId, '--max-rate', '501'], /--max-rate <n>.*must be an integer 1\.\.500/],
      [['cancel', 'not an execution'], /^dlq: execution: must be an execution ARN or a name/],
    ] as const) {
      const run = await dlq(...argv);
      expect([run.code, run.stderr.trimEnd().split('\n').length]).toEqual([2, 1]);
      expect(run.stderr).toMatch(message);
    }
    expect(await executions()).toHaveLength(2); // only the two of the --cause / unpark case
  });

  it('dlq redrive --dry-run prints what would be parked, sampled and moved, the ramp and its wall time, and moves nothing', async () => {
    const dry = await dlq('redrive', incidentId, '--dry-run', '--ramp-rates', '5,50', '--sample-size', '3');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/ended in Done/);
    expect(dry.stdout).toMatch(/result: +Dry run for .*: preflight ok, nothing moved; a redrive now would /);
    expect(dry.stdout).toMatch(/sample: +3 \(then a \d+ s verification window\)/);
    expect(dry.stdout).toMatch(/move: +\d+ by move task/);
    expect(dry.stdout).toMatch(/ramp step 1: +5 msg\/s, \d+ messages, about /);
    expect(dry.stdout).toMatch(/estimated: +about /);
    const ctx = contextFromEnv({ stdout: { write: () => true }, stderr: { write: () => true } });
    const depth = await sqsClient().send(
      new GetQueueAttributesCommand({
        QueueUrl: (await ctx.incidents.getIncident(incidentId))?.dlqUrl,
        AttributeNames: ['ApproximateNumberOfMessages'],
      }),
    );
    expect(Number(depth.Attributes?.ApproximateNumberOfMessages)).toBe(40);
  });

  it('dlq cancel during the ramp cancels the move task and ends the run Cancelled, reconciled, with who cancelled in the audit trail', async () => {
    const redrive = [
      'redrive',
      incidentId,
      '--ramp-rates',
      '1',
      '--dwell-seconds',
      '3',
      '--verify-margin-seconds',
      '1',
      '--by',
      'carol',
    ];
    const started = await dlq(...redrive, '--json');
    expect(started.code).toBe(0);
    const { name } = started.json<{ name: string }>();
    // The same command again (a retry after a lost response) is the same execution (C19).
    const retried = await dlq(...redrive, '--name', name, '--json');
    expect(retried.json<{ name: string }>().name).toBe(name);
    expect((await executions()).filter((e) => e.name === name)).toHaveLength(1);

    // Wait until the ramp runs (the move task moves 1 msg/s), then cancel.
    const ctx = contextFromEnv({ stdout: { write: () => true }, stderr: { write: () => true } });
    const arn = executionArnFrom(ctx, name);
    let before: RunView = await readRun(ctx, arn);
    while (before.status === 'RUNNING' && !before.path.some((s) => s.name === 'Dwell')) {
      await sleep(250);
      before = await readRun(ctx, arn);
    }
    expect([before.status, before.taskOutputs.VerifySample]).toEqual(['RUNNING', expect.anything()]);
    const cancel = await dlq(
      'cancel',
      name,
      '--by',
      'dave',
      '--reason',
      'consumer deploy rolled back',
      '--json',
    );
    expect(cancel.code).toBe(0);
    const out = cancel.json<{ taskCancelled: boolean; run: RunView }>();
    expect(out.taskCancelled).toBe(true);
    expect(out.run).toMatchObject({ status: 'SUCCEEDED', currentState: 'Cancelled' });
    expect(out.run.ramp?.reason).toMatch(/^cancelled by dave \(cli\) at .*: consumer deploy rolled back/);
    const r = out.run.reconcile as Record<string, number | boolean>;
    // What the task moved before the cancel is REDRIVEN (not missing); the rest is still in the DLQ.
    expect(r.inventoried).toBe(
      (r.redriven as number) +
        (r.parked as number) +
        (r.discarded as number) +
        (r.inDlq as number) +
        ((r.missing ?? r.lost) as number),
    );
    expect(r.missing ?? r.lost).toBe(0);
    expect(r.inDlq).toBeGreaterThan(0);

    const shown = (await dlq('show', incidentId, '--json')).json<OnCallReport>();
    expect(shown.redrive?.outcome).toBe('cancelled');
    const kinds = shown.audit.filter((e) => e.executionName === name).map((e) => [e.kind, e.by]);
    expect(kinds).toEqual(
      expect.arrayContaining([
        ['run-started', 'carol'],
        ['cancel-requested', 'dave'],
        ['run-ended', null],
      ]),
    );
    // A second cancel of the ended run changes nothing and says so.
    const again = await dlq('cancel', name);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already ended SUCCEEDED in Cancelled/);
  });
});
