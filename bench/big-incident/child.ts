/**
 * One big incident end to end, measured (run by bench/big-incident/run.ts in a process of its own,
 * with the SQS stand-in in the parent process, so this process's memory is the pipeline's, not the
 * queue's): a DLQ of N messages seeded straight, a bare receive-and-write loop over it for
 * comparison, then the healthy scenario on the real triage handler, ASL and handlers
 * (local/demo/run-scenario.ts). Prints one JSON line with the counters of every phase.
 *
 * Usage (through run.ts): BENCH_SQS_ENDPOINT=... LOCAL_DYNAMODB_ENDPOINT=... tsx child.ts N
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { dynamoClient, sqsClient } from '#platform/clients.js';
import { autoApprover } from '../../local/approver.js';
import type { RunPhase } from '../../local/demo/run-scenario.js';
import { runScenario } from '../../local/demo/run-scenario.js';
import { healthy } from '../../local/demo/scenarios/healthy.js';
import { LocalWorkflowRunner } from '../../local/runner.js';
import { startLocalStack } from '../../local/stack.js';
import { type ApiCounts, countCalls, since, snapshot } from '../support/api-counters.js';
import { bareLoop } from '../support/measure.js';

const N = Number(process.argv[2] ?? 10_000);

/** Counters, time and peak memory of one phase. */
export interface PhaseMeasure {
  ms: number;
  sqs: ApiCounts;
  dynamo: ApiCounts;
  /** Peak resident set size of this process during the phase, bytes. */
  peakRss: number;
  /** Peak V8 heap in use during the phase, bytes. */
  peakHeap: number;
}

/** What the child prints. */
export interface IncidentMeasure {
  messages: number;
  phases: Partial<Record<RunPhase | 'bare-loop', PhaseMeasure>>;
  /** Of the inventory phase: triage's own invocation, milliseconds. */
  triageMs: number;
  report: Awaited<ReturnType<typeof runScenario>>;
  /** Task state -> function folder (for memory sizes). */
  bindings: Record<string, string>;
  rampRates: number[];
  dwellSeconds: number;
  /**
   * Heap the inventory retains, bytes: after a full garbage collection at the end of triage's
   * invocation and of each ContinueInventory invocation, V8's heap in use minus the same measure
   * taken just before the inventory began (the demo's own bookkeeping of the seeded orders is in
   * that baseline). The largest of those. Peak `heapUsed` also counts garbage not yet collected,
   * which grows with the run's length as V8 collects less often.
   */
  retainedHeapInventory: number;
  /** Full collections made for {@link retainedHeapInventory}, and their milliseconds (taken off the inventory's time). */
  gcCount: number;
  gcMs: number;
}

/** A full collection (the child runs with --expose-gc), and V8's heap in use after it, bytes. */
function heapAfterGc(): { heap: number; ms: number } {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('bench child: run with node --expose-gc (bench/big-incident/run.ts does)');
  const at = performance.now();
  gc();
  return { heap: process.memoryUsage().heapUsed, ms: performance.now() - at };
}

async function main(): Promise<IncidentMeasure> {
  await startLocalStack({
    sqsEndpoint: process.env.BENCH_SQS_ENDPOINT as string,
    dynamoEndpoint: process.env.LOCAL_DYNAMODB_ENDPOINT as string,
    tableName: `bench-big-${N}-${process.pid}`,
  });
  const sqs = countCalls(sqsClient(), { capacity: true });
  const dynamo = countCalls(dynamoClient(), { capacity: true });
  const phases: IncidentMeasure['phases'] = {};
  let current: { name: RunPhase | 'bare-loop'; at: number; sqs: ApiCounts; dynamo: ApiCounts } | undefined;
  let peakRss = 0;
  let peakHeap = 0;
  const sample = () => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  };
  const sampler = setInterval(sample, 100);
  const mark = (name: RunPhase | 'bare-loop' | undefined) => {
    sample();
    const now = performance.now();
    if (current)
      phases[current.name] = {
        ms: now - current.at,
        sqs: since(sqs, current.sqs),
        dynamo: since(dynamo, current.dynamo),
        peakRss,
        peakHeap,
      };
    peakRss = 0;
    peakHeap = 0;
    sample();
    current = name ? { name, at: now, sqs: snapshot(sqs), dynamo: snapshot(dynamo) } : undefined;
  };
  let triageStart = 0;
  let triageMs = 0;
  let baselineHeap: number | undefined;
  let retainedHeapInventory = 0;
  let gcCount = 0;
  let gcMs = 0;
  const retained = () => {
    const { heap, ms } = heapAfterGc();
    gcCount += 1;
    gcMs += ms;
    // The collection's time is not the inventory's: start the phase's clock that much later.
    if (current) current.at += ms;
    if (baselineHeap === undefined) baselineHeap = heap;
    else retainedHeapInventory = Math.max(retainedHeapInventory, heap - baselineHeap);
  };
  const report = await runScenario(
    {
      ...healthy,
      // The floor the inventory is compared with, on the same full DLQ and the same stack.
      beforeTriage: async (ctx) => {
        mark('bare-loop');
        await bareLoop({
          dlqUrl: ctx.incident.queues.dlqUrl,
          tableName: process.env.TABLE_NAME as string,
          visibilityTimeoutSeconds: 3600,
        });
        mark(undefined);
      },
    },
    {
      dlqDepth: N,
      approver: autoApprover(),
      // The consumer's calls are not the pipeline's.
      consumerSqs: new SQSClient({}),
      say: (line) => {
        if (/\] DLQ alarm /.test(line)) {
          retained();
          triageStart = performance.now();
        }
        if (/\] Triage: /.test(line)) {
          triageMs = performance.now() - triageStart;
          retained();
        }
      },
      onTaskResult: (state) => {
        if (state === 'ContinueInventory') retained();
      },
      onPhase: (phase) => mark(phase === 'done' ? undefined : phase),
    },
  );
  mark(undefined);
  clearInterval(sampler);
  const bindings = new LocalWorkflowRunner().taskBindings();
  return {
    messages: N,
    phases,
    triageMs,
    report,
    bindings,
    rampRates: healthyRamp.rampRates,
    dwellSeconds: healthyRamp.dwellSeconds,
    retainedHeapInventory,
    gcCount,
    gcMs,
  };
}

/** The demo registration's ramp (local/demo/scenario.ts). */
const healthyRamp = { rampRates: [5, 50, 200], dwellSeconds: 2 };

main().then(
  (measure) => {
    process.stdout.write(`${JSON.stringify(measure)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(
      `bench child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
