/**
 * The big-incident benchmark (`npm run bench:big`; sizes default to 10,000 and 100,000): for each
 * size, one incident end to end on the local stack, in a process of its own (child.ts), with the
 * SQS stand-in in this process so the child's memory is the pipeline's. Prints, measured in one
 * run, per size:
 *
 * - inventory (triage + ContinueInventory) throughput against a bare receive-and-BatchWrite loop
 *   over the same DLQ (ratio), and its API calls per message;
 * - API calls, DynamoDB read/write units and SQS requests per message for the whole run;
 * - peak RSS of the pipeline's process during the inventory and the whole run, and the heap the
 *   inventory retains (after a full collection at the end of each of its invocations, above the heap
 *   before it began);
 * - state transitions and Lambda invocations per execution, GB-seconds;
 * - the redrive's wall time against the ideal time of its ramp plan (ratio);
 * - the price of the run at AWS list prices (docs/cost-model.md says which prices and how).
 *
 * Compare ratios within one run, not rates across runs: the machine is shared.
 *
 * Usage: npx tsx bench/big-incident/run.ts [sizes...]
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { FUNCTION_ACCESS, type FunctionName } from '@dlq-redrive/cdk/function-catalog';
import { createSqsServer } from '../../local/aws-standins/sqs-indexed.js';
import { startDynamoLocal } from '../../local/stack.js';
import { totalCalls } from '../support/api-counters.js';
import type { IncidentMeasure, PhaseMeasure } from './child.js';

const SIZES = process.argv.slice(2).map(Number);
if (SIZES.length === 0) SIZES.push(10_000, 100_000);

/**
 * AWS list prices, us-east-1, on-demand, without free tiers (checked 2026-01; docs/cost-model.md).
 * @see https://aws.amazon.com/lambda/pricing/
 * @see https://aws.amazon.com/step-functions/pricing/
 * @see https://aws.amazon.com/sqs/pricing/
 * @see https://aws.amazon.com/dynamodb/pricing/on-demand/
 */
export const PRICES = {
  lambdaRequest: 0.2 / 1e6,
  lambdaGbSecond: 0.0000166667,
  stateTransition: 0.025 / 1000,
  sqsRequest: 0.4 / 1e6,
  dynamoWriteUnit: 0.625 / 1e6,
  dynamoReadUnit: 0.125 / 1e6,
} as const;
/**
 * SQS requests a move task makes per message moved, assumed batched by 10 (receive, send, delete):
 * the service bills them as API requests but does not say how it batches them.
 */
export const MOVE_TASK_REQUESTS_PER_MESSAGE = 0.3;

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

async function measure(size: number, dynamoEndpoint: string): Promise<IncidentMeasure> {
  const port = await freePort();
  const sqs = await createSqsServer({
    port,
    hostname: '127.0.0.1',
    region: 'us-east-1',
    accountId: '123456789012',
    emulateQueueCreationLifecycle: false,
  });
  try {
    const child = spawn(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', fileURLToPath(new URL('./child.ts', import.meta.url)), String(size)],
      {
        env: {
          ...process.env,
          BENCH_SQS_ENDPOINT: `http://127.0.0.1:${port}`,
          LOCAL_DYNAMODB_ENDPOINT: dynamoEndpoint,
          POWERTOOLS_LOG_LEVEL: 'SILENT',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    if (code !== 0) throw new Error(`the ${size}-message run failed (exit ${code})`);
    return JSON.parse(out.trim().split('\n').at(-1) as string) as IncidentMeasure;
  } finally {
    sqs.closeAllConnections();
    await new Promise((r) => sqs.close(r));
  }
}

/** Seconds the ramp would take with no overhead: dwell at each step, then the rest at the top rate. */
export function idealRampSeconds(messages: number, rates: readonly number[], dwellSeconds: number): number {
  let left = messages;
  let seconds = 0;
  for (const [i, rate] of rates.entries()) {
    const moved = i < rates.length - 1 ? Math.min(left, rate * dwellSeconds) : left;
    seconds += moved / rate;
    left -= moved;
    if (left <= 0) break;
  }
  return seconds;
}

const sum = (phases: Array<PhaseMeasure | undefined>, pick: (p: PhaseMeasure) => number) =>
  phases.reduce((n, p) => n + (p ? pick(p) : 0), 0);

/** The derived figures of one size. */
function figures(m: IncidentMeasure) {
  const n = m.messages;
  const p = m.phases;
  const run = [p.inventory, p.approval, p.park, p.sample, p.verify, p.ramp, p.reconcile];
  const inventory = p.inventory as PhaseMeasure;
  const bare = p['bare-loop'] as PhaseMeasure;
  const report = m.report;
  const lambdaInvocations = Object.values(report.taskInvocations).reduce((a, b) => a + b, 0) + 1;
  const memoryOf = (state: string) =>
    FUNCTION_ACCESS[(m.bindings[state] ?? 'triage') as FunctionName]?.memoryMiB ?? 1024;
  const gbSeconds =
    Object.entries(report.taskInvocationMs).reduce(
      (s, [state, ms]) => s + (ms / 1000) * (memoryOf(state) / 1024),
      0,
    ) +
    (m.triageMs / 1000) * (FUNCTION_ACCESS.triage.memoryMiB / 1024);
  const sqsCalls = sum(run, (x) => totalCalls(x.sqs));
  const dynamoCalls = sum(run, (x) => totalCalls(x.dynamo));
  const rcu = sum(run, (x) => x.dynamo.rcu);
  const wcu = sum(run, (x) => x.dynamo.wcu);
  const rampMs = p.ramp?.ms ?? 0;
  const idealMs = idealRampSeconds(report.bulkMoved, m.rampRates, m.dwellSeconds) * 1000;
  const price = {
    lambda: lambdaInvocations * PRICES.lambdaRequest + gbSeconds * PRICES.lambdaGbSecond,
    stepFunctions: report.stateTransitions * PRICES.stateTransition,
    sqs: (sqsCalls + report.bulkMoved * MOVE_TASK_REQUESTS_PER_MESSAGE) * PRICES.sqsRequest,
    dynamo: wcu * PRICES.dynamoWriteUnit + rcu * PRICES.dynamoReadUnit,
  };
  return {
    n,
    outcome: report.outcome,
    inventoried: report.inventoried,
    deadLettered: report.deadLettered,
    countsAddUp: report.countsAddUp,
    missing: report.missing,
    inventoryRate: n / (inventory.ms / 1000),
    bareRate: n / (bare.ms / 1000),
    inventorySqsPerMsg: totalCalls(inventory.sqs) / n,
    inventoryDynamoPerMsg: totalCalls(inventory.dynamo) / n,
    runSqsPerMsg: sqsCalls / n,
    runDynamoPerMsg: dynamoCalls / n,
    rcuPerMsg: rcu / n,
    wcuPerMsg: wcu / n,
    peakRssInventory: inventory.peakRss,
    peakHeapInventory: inventory.peakHeap,
    retainedHeapInventory: m.retainedHeapInventory,
    gcMs: m.gcMs,
    peakRssRun: Math.max(...run.map((x) => x?.peakRss ?? 0)),
    executions: report.executions,
    transitionsPerExecution: report.stateTransitions / report.executions,
    lambdaPerExecution: lambdaInvocations / report.executions,
    inventoryInvocations: report.inventoryInvocations,
    gbSeconds,
    rampSeconds: rampMs / 1000,
    idealRampSeconds: idealMs / 1000,
    phaseSeconds: Object.fromEntries(
      Object.entries(p).map(([k, v]) => [k, Number((v.ms / 1000).toFixed(1))]),
    ),
    callsByPhase: Object.fromEntries(
      Object.entries(p).map(([k, v]) => [
        k,
        {
          sqs: v.sqs.calls,
          dynamo: v.dynamo.calls,
          rcu: Math.round(v.dynamo.rcu),
          wcu: Math.round(v.dynamo.wcu),
        },
      ]),
    ),
    price,
  };
}

async function main() {
  const dynamo = await startDynamoLocal();
  const results: Array<ReturnType<typeof figures>> = [];
  const failures: string[] = [];
  try {
    for (const size of SIZES) {
      process.stderr.write(`\n=== ${size} messages ===\n`);
      try {
        const result = figures(await measure(size, dynamo.endpoint));
        results.push(result);
        // At once, so a size's figures survive a later size failing or being stopped.
        process.stderr.write(`${JSON.stringify({ result })}\n`);
      } catch (error) {
        failures.push(`${size}: ${error instanceof Error ? error.message : String(error)}`);
        process.stderr.write(`the ${size}-message run did not finish: ${failures.at(-1)}\n`);
      }
    }
  } finally {
    await dynamo.stop();
  }
  const mb = (b: number) => `${(b / 1e6).toFixed(0)} MB`;
  const f3 = (x: number) => x.toFixed(3);
  console.table(
    Object.fromEntries(
      results.map((r) => [
        `${r.n} messages`,
        {
          outcome: `${r.outcome}, ${r.inventoried}/${r.deadLettered} inventoried, missing ${r.missing}${r.countsAddUp ? '' : ', counts do NOT add up'}`,
          'inventory msg/s': Math.round(r.inventoryRate),
          'bare loop msg/s': Math.round(r.bareRate),
          'inventory / bare (ratio)': Number((r.inventoryRate / r.bareRate).toFixed(2)),
          'inventory SQS calls/msg': f3(r.inventorySqsPerMsg),
          'inventory DynamoDB calls/msg': f3(r.inventoryDynamoPerMsg),
          'run API calls/msg': f3(r.runSqsPerMsg + r.runDynamoPerMsg),
          'run SQS calls/msg': f3(r.runSqsPerMsg),
          'run DynamoDB calls/msg': f3(r.runDynamoPerMsg),
          'DynamoDB RCU / WCU per msg': `${f3(r.rcuPerMsg)} / ${f3(r.wcuPerMsg)}`,
          'peak RSS inventory / run': `${mb(r.peakRssInventory)} / ${mb(r.peakRssRun)}`,
          'peak heap inventory': mb(r.peakHeapInventory),
          'heap retained by the inventory': mb(r.retainedHeapInventory),
          executions: r.executions,
          'transitions / execution': Number(r.transitionsPerExecution.toFixed(1)),
          'Lambda invocations / execution': Number(r.lambdaPerExecution.toFixed(1)),
          'inventory invocations': r.inventoryInvocations,
          'GB-s (local timing)': Number(r.gbSeconds.toFixed(1)),
          'ramp s / ideal s (ratio)': `${r.rampSeconds.toFixed(0)} / ${r.idealRampSeconds.toFixed(0)} (${(r.rampSeconds / r.idealRampSeconds).toFixed(2)})`,
          'price USD (Lambda, SFN, SQS, DynamoDB)': `${(r.price.lambda + r.price.stepFunctions + r.price.sqs + r.price.dynamo).toFixed(4)} (${r.price.lambda.toFixed(4)}, ${r.price.stepFunctions.toFixed(4)}, ${r.price.sqs.toFixed(4)}, ${r.price.dynamo.toFixed(4)})`,
        },
      ]),
    ),
  );
  if (results.length >= 2) {
    const [a, b] = [results[0], results.at(-1)] as [ReturnType<typeof figures>, ReturnType<typeof figures>];
    console.log(
      `memory ${a.n} -> ${b.n}: heap retained by the inventory x${(b.retainedHeapInventory / a.retainedHeapInventory).toFixed(2)} (${mb(a.retainedHeapInventory)} -> ${mb(b.retainedHeapInventory)}), peak RSS of the inventory x${(b.peakRssInventory / a.peakRssInventory).toFixed(2)}, peak heap (garbage included) x${(b.peakHeapInventory / a.peakHeapInventory).toFixed(2)} (flat means within 1.5x)`,
    );
    console.log(
      `state transitions ${a.n} -> ${b.n}: x${((b.transitionsPerExecution * b.executions) / (a.transitionsPerExecution * a.executions)).toFixed(2)} for x${(b.n / a.n).toFixed(0)} messages`,
    );
  }
  console.log(JSON.stringify({ results, failures }, null, 0));
  if (failures.length > 0) process.exitCode = 1;
}

await main();
