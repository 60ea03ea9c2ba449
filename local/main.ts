/**
 * `npm start`: the main job on the local stack, end to end, with no AWS account.
 *
 * An `orders` queue's consumer fails on poison payloads and, during a dependency outage, on healthy
 * messages too; SQS dead-letters them; the DLQ alarm fires; the real triage handler stores an
 * envelope per message and starts the redrive workflow (the real ASL, the real task handlers); the
 * workflow asks for approval; the outage ends; the sample, its verification and the ramped move
 * task run with live progress; the run ends with a table of where every message ended.
 *
 * Flags: `--json` (the report as one JSON object on the last line), `--approve` / `--reject` /
 * `--approve-via <name>` (default: prompt on a terminal, auto-approve otherwise), `--messages <n>`,
 * `--verbose` (handler logs). Exit code 0 only when nothing was lost and the counts add up.
 */
import './demo/env.js';
import { sqsClient } from '#platform/clients.js';
import { createAlarmEvaluator } from './alarm-evaluator.js';
import { type Approver, approverFromArgs } from './approver.js';
import { type RampProgress, startRampProgress } from './demo/progress.js';
import { queueDepth } from './demo/queues.js';
import {
  countsAddUp,
  exitCodeOf,
  formatReport,
  type ReconcileCounts,
  type RunReport,
} from './demo/report.js';
import { prepareIncident } from './demo/scenario.js';
import { runTriage } from './demo/triage-local.js';
import { LocalWorkflowRunner } from './runner.js';
import { startLocalStack } from './stack.js';
import { createLocalWorkflowStarter } from './workflow-starter-local.js';

interface Args {
  json: boolean;
  messages: number;
}

const FLAGS = new Set(['--json', '--approve', '--reject', '--verbose']);
const WITH_VALUE = new Set(['--messages', '--approve-via']);

/** @throws Error naming the flag when a flag is unknown or a value is out of range. */
function parseArgs(argv: readonly string[]): Args {
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    if (WITH_VALUE.has(flag)) i += 1;
    else if (!FLAGS.has(flag))
      throw new Error(`${flag}: unknown flag (known: ${[...FLAGS, ...WITH_VALUE].join(', ')})`);
  }
  const at = argv.indexOf('--messages');
  const messages = at >= 0 ? Number(argv[at + 1]) : 300;
  if (!Number.isInteger(messages) || messages < 20 || messages > 5000)
    throw new Error(`--messages: must be an integer 20..5000, got "${argv[at + 1]}"`);
  return { json: argv.includes('--json'), messages };
}

/** Forwards the approver's answer, running `after` first (the fix is deployed on approval). */
function onDecision(approver: Approver, after: (decision: unknown) => void): Approver {
  return {
    name: approver.name,
    requestApproval: (request, callbacks) =>
      approver.requestApproval(request, {
        sendTaskSuccess: async (token, output) => {
          after(output);
          await callbacks.sendTaskSuccess(token, output);
        },
        sendTaskFailure: (token, error, cause) => callbacks.sendTaskFailure(token, error, cause),
      }),
  };
}

async function main(): Promise<number> {
  const startedAt = Date.now();
  const argv = process.argv.slice(2);
  const args = parseArgs(argv);
  // Optional approvers register themselves when imported (`--approve-via slack`).
  if (argv.includes('--approve-via')) await import('./slack-approver.js');
  const approver = await approverFromArgs(argv);
  const out = args.json ? process.stderr : process.stdout;
  const say = (line: string) => out.write(`${line}\n`);
  const seconds = () => `${((Date.now() - startedAt) / 1000).toFixed(1)}s`;

  say('Starting the local stack (SQS stand-in + DynamoDB Local)...');
  const stack = await startLocalStack();
  const sqs = sqsClient();
  let progress: RampProgress | undefined;
  try {
    say(
      `[${seconds()}] Producing ${args.messages} orders; the consumer fails on poison payloads and, after a while, its dependency goes down...`,
    );
    const incident = await prepareIncident(sqs, { messages: args.messages });
    const { queues, consumer } = incident;
    say(
      `[${seconds()}] Source queue drained: ${consumer.stats.processed} processed, ${incident.dlqDepth} dead-lettered to ${queues.dlqArn} (${incident.produced.poisonIds.length} poison).`,
    );

    const verifyWindowMs = queues.visibilityTimeoutSeconds * queues.maxReceiveCount * 1000 + 1500;
    const runner = new LocalWorkflowRunner({
      approver: onDecision(approver, (decision) => {
        if ((decision as { decision?: string }).decision === 'approved') {
          consumer.endOutage();
          say(
            `[${seconds()}] Approved. The dependency is back (fix deployed): the consumer is healthy again.`,
          );
        } else say(`[${seconds()}] Rejected: nothing will be moved.`);
      }),
      // The verification window must outlast visibility timeout x maxReceiveCount so a still-broken
      // consumer would have dead-lettered the samples again; the queues here use 1 s timeouts.
      waitTimeOverrides: { WaitForVerification: verifyWindowMs },
      retryIntervalMs: 200,
      onTaskResult: (state, result) => {
        const r = result as Record<string, unknown>;
        if (state === 'Park')
          say(`[${seconds()}] Parked ${r.parked} messages that must not be redriven (poison/permanent).`);
        if (state === 'SampleRedrive')
          say(
            `[${seconds()}] Sample redrive: ${r.sent} sent (${r.alreadySent} already sent); verifying for ${(verifyWindowMs / 1000).toFixed(1)} s (the plan's ${r.verifyAfterSeconds} s window, shortened to the demo queues' timings)...`,
          );
        if (state === 'VerifySample') say(`[${seconds()}] Verification: ${r.verdict} (${r.reason}).`);
        if (state === 'StartMoveTask' || state === 'StepUp' || state === 'CheckProgress') {
          if (!progress && state === 'StartMoveTask') {
            say(`[${seconds()}] Ramped redrive started (StartMessageMoveTask):`);
            progress = startRampProgress(
              sqs,
              queues.dlqUrl,
              Number(r.toMove) > 0 ? Number(r.toMove) : undefined,
            );
          }
          progress?.setTaskRate(Number(r.rate), Number(r.rateIndex));
        }
      },
    });
    const starter = createLocalWorkflowStarter(runner);

    const alarm = await createAlarmEvaluator({ dlqUrl: queues.dlqUrl, queueName: 'orders-dlq' }).evaluate();
    if (!alarm) throw new Error('the DLQ alarm did not fire: the DLQ is empty');
    say(
      `[${seconds()}] DLQ alarm orders-dlq-not-empty: ApproximateNumberOfMessagesVisible >= 1 -> ALARM; triage runs...`,
    );
    const triage = await runTriage(alarm, starter);
    say(`[${seconds()}] Triage: ${triage.message}`);
    const execution = starter.executions[0];
    if (!execution) throw new Error(`triage started no workflow: ${triage.message}`);
    say(
      `[${seconds()}] Workflow ${execution.executionName} started; waiting for approval (${approver.name})...`,
    );
    const result = await execution.result;
    if (progress) {
      const moved = await progress.stop();
      progress = undefined;
      say(`[${seconds()}] Move task finished: ${moved.moved}/${moved.total} moved.`);
    }
    await consumer.stop();

    const reconcile = result.taskResults.Reconcile as ReconcileCounts | undefined;
    const output = (result.output ?? {}) as { outcome?: unknown };
    const outcome = typeof output.outcome === 'string' ? output.outcome : (result.path.at(-1) ?? null);
    const dlqNow = await queueDepth(sqs, queues.dlqUrl);
    const inventoried = reconcile?.inventoried ?? incident.dlqDepth;
    const report: RunReport = {
      incidentId: triage.queues[0]?.incidentId ?? null,
      executionName: execution.executionName,
      status: result.status,
      outcome,
      inventoried,
      redriven: reconcile?.redriven ?? 0,
      parked: reconcile?.parked ?? 0,
      discarded: reconcile?.discarded ?? 0,
      remaining: reconcile?.inDlq ?? dlqNow.visible + dlqNow.inFlight,
      lost: reconcile?.lost ?? 0,
      duplicateSendsPrevented: reconcile?.duplicateSendsPrevented ?? 0,
      possibleDuplicateSends: reconcile?.possibleDuplicateSends ?? 0,
      countsAddUp: reconcile ? countsAddUp(reconcile) : dlqNow.visible + dlqNow.inFlight === inventoried,
      stateTransitions: result.stateTransitions,
      consumer: {
        processed: consumer.stats.processed,
        duplicatesSkipped: consumer.stats.duplicatesSkipped,
        processedTwice: consumer.stats.processedTwice,
      },
      durationMs: Date.now() - startedAt,
    };
    if (result.status !== 'SUCCEEDED')
      say(`Workflow ended ${result.status}: ${result.error ?? ''} ${result.cause ?? ''}`.trim());
    say(formatReport(report));
    if (args.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    return exitCodeOf(report);
  } finally {
    await progress?.stop();
    await stack.stop();
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
