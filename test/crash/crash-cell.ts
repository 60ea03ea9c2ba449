/**
 * One cell of the crash matrix (and one run of the conservation property test): an incident on
 * the local stack, end to end on the real triage handler, the real ASL and the real task handlers,
 * with faults injected on the way (local/fault-injection.ts: a crash right after an AWS call, a
 * message deleted by hand, a late arrival), recovered the way production would recover (a Lambda
 * retry, or a console restart of the workflow), and then the report compared with what physically
 * happened: what the consumer received, what the parking queue and the DLQ hold.
 *
 * Nothing on the main path is mocked: the fault seam wraps the shared SDK clients, the rest is the
 * product.
 */
import {
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { createIncidentStore } from '#incident/incident-store.js';
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { readJsonPath } from '#inventory/idempotency-key.js';
import { sqsClient } from '#platform/clients.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { PARK_BATCH } from '../../functions/park/park-transfer.js';
import type { ReconcileResult } from '../../functions/reconcile/reconcile.js';
import { createTriageHandler } from '../../functions/triage/handler.js';
import { createAlarmEvaluator } from '../../local/alarm-evaluator.js';
import { autoApprover } from '../../local/approver.js';
import { waitUntilDrained } from '../../local/demo/queues.js';
import { reconcileOf } from '../../local/demo/report.js';
import { prepareIncident } from '../../local/demo/scenario.js';
import { type CrashPlan, FaultInjector } from '../../local/fault-injection.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { type ExecutionResult, LocalWorkflowRunner } from '../../local/runner.js';
import { createLocalWorkflowStarter } from '../../local/workflow-starter-local.js';

/**
 * A fault applied when a Task state completes (the run goes on after it). `hand-delete`: someone
 * deletes `count` DLQ messages. `late-arrival`: `count` new orders dead-letter after triage (sent to
 * the source queue while its consumer is still broken, so only before the approval: after
 * `ValidateInput` or `Preflight`).
 */
export interface StateFault {
  /** The Task state after whose result the fault applies (`Park`, `StartMoveTask`, ...). */
  afterState: string;
  kind: 'hand-delete' | 'late-arrival';
  count: number;
}

/** One cell or property-test run. */
export interface CellSpec {
  /** Unique per stack: the queues are `<id>`, `<id>-dlq`, `<id>-parking`. */
  id: string;
  /** Where the run crashes, and how it is recovered (`retry`: Lambda / Step Functions retry; `restart`: console). */
  crash?: CrashPlan;
  faults?: readonly StateFault[];
  /** @default 12 */
  messages?: number;
  /** Every n-th message is poison. @default 6 */
  poisonEvery?: number;
}

/** What physically happened, read after the run. */
export interface Physical {
  /** Producer keys delivered to the consumer after the approval (redriven), by distinct DLQ copy count. */
  delivered: Map<string, number>;
  parking: string[];
  dlq: string[];
  /** Keys of every envelope of the DLQ (what triage and later inventories saw). */
  envelopeKeys: string[];
  /** Keys removed by hand. */
  handDeleted: string[];
  /** Keys that dead-lettered after triage (late arrivals the schedule made). */
  late: string[];
}

/** The outcome of a cell. */
export interface CellOutcome {
  spec: CellSpec;
  executions: ExecutionResult[];
  /** The last Reconcile result across the executions. */
  report: ReconcileResult | undefined;
  physical: Physical;
  crashes: FaultInjector['crashes'];
  /** Every AWS call the run's invocations made (the crash matrix finds its call sites here). */
  calls: FaultInjector['calls'];
  /** Empty when the report is true and nothing was lost or duplicated unrecorded. */
  problems: string[];
  durationMs: number;
}

/** Triage's function timeout in the cells, milliseconds (its held messages stay invisible this + 30 s). */
const TRIAGE_TIMEOUT_MS = 20_000;
const LAMBDA_TIMEOUT_MS = 40_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const keyOf = (m: Pick<Message, 'Body'>) => readJsonPath(m.Body ?? '', '$.orderId') ?? m.Body ?? '';

/** Every message a queue holds, by producer key; leaves them invisible for a minute (the run is over). */
async function contents(url: string): Promise<string[]> {
  const keys: string[] = [];
  for (let empty = 0; empty < 3; ) {
    const out = await sqsClient().send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 60,
        WaitTimeSeconds: 1,
      }),
    );
    const batch = out.Messages ?? [];
    if (batch.length === 0) empty += 1;
    else empty = 0;
    keys.push(...batch.map(keyOf));
  }
  return keys;
}

async function deleteByHand(dlqUrl: string, count: number): Promise<string[]> {
  const deleted: string[] = [];
  for (let attempt = 0; deleted.length < count && attempt < 10; attempt++) {
    const out = await sqsClient().send(
      new ReceiveMessageCommand({
        QueueUrl: dlqUrl,
        MaxNumberOfMessages: Math.min(10, count - deleted.length),
        VisibilityTimeout: 30,
        WaitTimeSeconds: 1,
      }),
    );
    for (const m of out.Messages ?? []) {
      await sqsClient().send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: m.ReceiptHandle }));
      deleted.push(keyOf(m));
    }
  }
  return deleted;
}

/** Sends `count` orders to the source queue and waits until the broken consumer has dead-lettered them. */
async function deadLetterLate(
  id: string,
  queues: { sourceUrl: string; dlqUrl: string },
  count: number,
  offset: number,
): Promise<string[]> {
  const before = (await contentsCount(queues.dlqUrl)) + count;
  const ids = Array.from({ length: count }, (_, i) => `${id}-late-${offset + i}`);
  for (const orderId of ids)
    await sqsClient().send(
      new SendMessageCommand({
        QueueUrl: queues.sourceUrl,
        MessageBody: JSON.stringify({ orderId, quantity: 1 }),
      }),
    );
  for (let waited = 0; waited < 60_000 && (await contentsCount(queues.dlqUrl)) < before; waited += 250)
    await sleep(250);
  return ids;
}

async function contentsCount(url: string): Promise<number> {
  const depth = await createSqsQueues().describe(url);
  return depth.visible + depth.inFlight + depth.delayed;
}

/** Runs one cell; never throws for a run that ends badly (the problems say so). */
export async function runCell(spec: CellSpec): Promise<CellOutcome> {
  const startedAt = Date.now();
  const sqs = sqsClient();
  const incident = await prepareIncident(sqs, {
    name: spec.id,
    messages: spec.messages ?? 12,
    poisonEvery: spec.poisonEvery ?? 6,
    outageAfterProcessed: 0,
    registration: { sampleSize: 2, rampRates: [50, 500], dwellSeconds: 1 },
  });
  const { queues, consumer } = incident;
  const faults = new FaultInjector();
  faults.install();
  if (spec.crash) faults.arm(spec.crash);
  const handDeleted: string[] = [];
  const late: string[] = [];
  let approvedAt: number | undefined;
  const applied = new Set<StateFault>();
  const problems: string[] = [];
  const executions: ExecutionResult[] = [];
  try {
    const runner = new LocalWorkflowRunner({
      faults,
      retryIntervalMs: 100,
      lambdaTimeoutMs: LAMBDA_TIMEOUT_MS,
      approver: {
        name: 'auto',
        requestApproval: (request, callbacks) =>
          autoApprover().requestApproval(request, {
            sendTaskSuccess: async (token, output) => {
              consumer.endOutage();
              approvedAt ??= consumer.deliveries.length;
              await callbacks.sendTaskSuccess(token, output);
            },
            sendTaskFailure: (token, error, cause) => callbacks.sendTaskFailure(token, error, cause),
          }),
      },
      onTaskResult: async (state) => {
        for (const fault of spec.faults ?? []) {
          if (fault.afterState !== state || applied.has(fault)) continue;
          applied.add(fault);
          if (fault.kind === 'hand-delete')
            handDeleted.push(...(await deleteByHand(queues.dlqUrl, fault.count)));
          else late.push(...(await deadLetterLate(spec.id, queues, fault.count, late.length)));
        }
      },
    });
    const starter = createLocalWorkflowStarter(runner, { inputDefaults: { verifyMarginSeconds: 2 } });
    const dlqName = queues.dlqArn.split(':').pop() as string;
    const alarm = await createAlarmEvaluator({ dlqUrl: queues.dlqUrl, queueName: dlqName }).evaluate();
    if (!alarm) throw new Error(`the ${dlqName} alarm did not fire`);

    // Triage: an asynchronous invocation. Lambda retries a failed one about a minute later with the
    // same request id; a console restart means an operator starts the workflow by hand instead.
    const handler = createTriageHandler({ overrides: { workflow: starter } });
    const requestId = `triage-${spec.id}`;
    const triageOnce = () =>
      faults.invoke('triage', () =>
        handler(alarm, {
          ...lambdaContext({ functionName: 'TriageFunction', timeoutMs: TRIAGE_TIMEOUT_MS }),
          awsRequestId: requestId,
        }),
      );
    let consoleStart = false;
    try {
      await triageOnce();
    } catch (error) {
      // The dead run's receive hides its messages until its visibility timeout ends; the retry (or
      // the operator) comes after that, as Lambda's own retry delay would. An operator starts the
      // workflow only when the dead run did not get as far as starting it.
      await sleep(TRIAGE_TIMEOUT_MS + 30_000);
      if ((error as Error).name === 'Lambda.Unknown') await triageOnce();
      else consoleStart = starter.executions.length === 0;
    }
    const console = () =>
      runner.start(
        { dlqArn: queues.dlqArn, verifyMarginSeconds: 2 },
        `${spec.id}-console-${executions.length}`,
      );
    let next = consoleStart ? console() : starter.executions[0];
    while (next) {
      const result = await next.result;
      executions.push(result);
      next = undefined;
      const crashedHere = faults.crashes.length > 0 && result.status === 'FAILED' && executions.length === 1;
      if (crashedHere && spec.crash?.mode === 'restart') next = console();
    }
    if (executions.length === 0) problems.push('no workflow ran');
    await waitUntilDrained(sqs, queues.sourceUrl, { timeoutMs: 60_000, quietMs: 1500 }).catch((e: Error) =>
      problems.push(`source queue did not drain: ${e.message}`),
    );
  } catch (error) {
    problems.push(`run failed: ${(error as Error).message}`);
  } finally {
    faults.uninstall();
    await consumer.stop();
  }

  // The report an operator reads: the last Reconcile of the runs, else the one the incident item
  // keeps (a restart after a crash that came after Reconcile wrote it has nothing left to settle).
  const incidentId = (executions[0]?.taskResults.ValidateInput as { incidentId?: string } | undefined)
    ?.incidentId;
  const lastReconciled = [...executions].reverse().find((e) => reconcileOf(e) !== undefined);
  const report = ((lastReconciled ? reconcileOf(lastReconciled) : undefined) ??
    (incidentId
      ? ((await createIncidentStore().getIncident(incidentId)) as { reconcile?: unknown } | undefined)
          ?.reconcile
      : undefined)) as ReconcileResult | undefined;
  const delivered = new Map<string, Set<string>>();
  for (const d of consumer.deliveries.slice(approvedAt ?? consumer.deliveries.length)) {
    const ids = delivered.get(d.key) ?? new Set<string>();
    ids.add(d.messageId);
    delivered.set(d.key, ids);
  }
  const envelopeKeys: string[] = [];
  for await (const e of createEnvelopeStore().listEnvelopes(queues.dlqArn))
    envelopeKeys.push(e.idempotencyKey);
  const physical: Physical = {
    delivered: new Map([...delivered].map(([k, ids]) => [k, ids.size])),
    parking: await contents(queues.parkingUrl),
    dlq: await contents(queues.dlqUrl),
    envelopeKeys,
    handDeleted,
    late,
  };
  problems.push(...judge(spec, report, physical, faults.crashes.length));
  return {
    spec,
    executions,
    report,
    physical,
    crashes: faults.crashes,
    calls: faults.calls,
    problems,
    durationMs: Date.now() - startedAt,
  };
}

/**
 * The properties every cell must keep:
 * - nothing lost: every message the pipeline saw is delivered, parked or still in the DLQ, unless
 *   the run removed it by hand;
 * - the report is true: missing = what was removed by hand (named), parked = the parking queue,
 *   in DLQ + in flight = the DLQ, redriven = DLQ messages delivered after the approval (a key the
 *   DLQ held twice may arrive twice), inventoried + late + returned = every state;
 * - every duplicate delivery is recorded: a key delivered in more copies than the DLQ held is in
 *   `possibleDuplicates`, and the report records at most one possible duplicate per message a
 *   crashed call had in hand: {@link MESSAGES_IN_HAND_PER_CRASH} per injected crash (Park moves
 *   ten messages at a time, so a crash between its record and its SENT leaves up to ten entries a
 *   retry must send again; each of them at most once more).
 */
/** Messages one call of the pipeline moves at once (Park's batches, functions/park/park-transfer.ts). */
export const MESSAGES_IN_HAND_PER_CRASH = PARK_BATCH;

export function judge(
  spec: CellSpec,
  report: ReconcileResult | undefined,
  physical: Physical,
  crashes: number,
): string[] {
  if (!report) return ['no Reconcile ran: the report is missing'];
  const problems: string[] = [];
  const delivered = new Set(physical.delivered.keys());
  const present = new Set([...physical.parking, ...physical.dlq]);
  const removed = new Set(physical.handDeleted);
  const lost = [...new Set([...physical.envelopeKeys, ...physical.late])].filter(
    (k) => !delivered.has(k) && !present.has(k) && !removed.has(k),
  );
  if (lost.length > 0) problems.push(`lost ${lost.length}: ${lost.slice(0, 5).join(', ')}`);
  const stateSum =
    report.redriven + report.parked + report.discarded + report.inDlq + report.inFlight + report.missing;
  if (report.inventoried + report.lateArrivals + report.returned !== stateSum)
    problems.push(
      `counts do not add up: ${report.inventoried} + ${report.lateArrivals} late + ${report.returned} returned != ${stateSum}`,
    );
  // A message removed before any inventory saw it (a late arrival) was never the pipeline's to lose.
  const known = new Set(physical.envelopeKeys);
  const removedKnown = [...removed].filter((k) => known.has(k));
  if (report.missing !== removedKnown.length)
    problems.push(`missing ${report.missing}, removed by hand ${removedKnown.length} the pipeline knew`);
  const named = new Set(report.missingMessages.map((m) => m.idempotencyKey));
  if (report.missingExact && removedKnown.some((k) => !named.has(k)))
    problems.push(`missingMessages ${[...named].join(', ')} do not name ${removedKnown.join(', ')}`);
  // The DLQ may hold two copies of one key (a producer or the source's consumer dead-lettered it
  // twice): each is a message of its own, redriven or parked on its own. A key seen more often at a
  // destination than the DLQ held it is a duplicate.
  const dlqCopies = new Map<string, number>();
  for (const k of physical.envelopeKeys) dlqCopies.set(k, (dlqCopies.get(k) ?? 0) + 1);
  const copiesOf = (k: string) => Math.max(1, dlqCopies.get(k) ?? 0);
  const tally = (keys: Iterable<[string, number]>) => {
    let within = 0;
    const beyond: string[] = [];
    for (const [k, n] of keys) {
      within += Math.min(n, copiesOf(k));
      if (n > copiesOf(k)) beyond.push(k);
    }
    return { within, beyond };
  };
  const parkedCount = new Map<string, number>();
  for (const k of physical.parking) parkedCount.set(k, (parkedCount.get(k) ?? 0) + 1);
  const parked = tally(parkedCount);
  if (report.parked !== parked.within)
    problems.push(`parked ${report.parked}, the parking queue holds ${parked.within} DLQ messages`);
  if (report.inDlq + report.inFlight !== physical.dlq.length)
    problems.push(
      `in DLQ ${report.inDlq} + in flight ${report.inFlight}, the DLQ holds ${physical.dlq.length}`,
    );
  // Late arrivals a move task carried before any inventory saw them have no envelope: their own row.
  const deliveries = tally(physical.delivered);
  if (report.redriven + report.lateMovedUnclassified !== deliveries.within)
    problems.push(
      `redriven ${report.redriven} + moved unclassified ${report.lateMovedUnclassified}, the consumer received ${deliveries.within} DLQ messages`,
    );
  const recorded = (kind: string) =>
    new Set(report.possibleDuplicates.filter((d) => d.kind === kind).map((d) => d.idempotencyKey));
  const unrecorded = deliveries.beyond.filter((k) => !recorded('redrive').has(k));
  if (unrecorded.length > 0) problems.push(`unrecorded duplicate deliveries: ${unrecorded.join(', ')}`);
  const unrecordedParked = parked.beyond.filter((k) => !recorded('park').has(k));
  if (unrecordedParked.length > 0)
    problems.push(`unrecorded duplicate copies in the parking queue: ${unrecordedParked.join(', ')}`);
  if (report.possibleDuplicateSends > crashes * MESSAGES_IN_HAND_PER_CRASH)
    problems.push(
      `${report.possibleDuplicateSends} possible duplicates recorded for ${crashes} crash(es) of at most ${MESSAGES_IN_HAND_PER_CRASH} messages in hand`,
    );
  // Each message at most one extra copy per crash, however many a batch had in hand.
  const twice = [...parkedCount].filter(([k, n]) => n - copiesOf(k) > crashes).map(([k]) => k);
  if (twice.length > 0)
    problems.push(`more duplicate copies in the parking queue than crashes: ${twice.join(', ')}`);
  if (spec.crash && crashes === 0)
    problems.push('the crash was never injected (its call site was not reached)');
  return problems;
}
