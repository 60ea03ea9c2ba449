import { availableParallelism, loadavg } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/sequencer.js';

// Timeouts catch hangs; they are not assertions. They grow with the load measured when the run
// starts (a second `npm test` beside this one doubles it), never below the quiet-machine values.
const load = Math.max(1, (loadavg()[0] ?? 0) / availableParallelism());
const scaled = (ms: number) => Math.round(ms * Math.min(4, load));

/**
 * Test files long by nature: fault suites that wait out a dead session's hold or a move task, the
 * conservation property's random fault schedules, the scenario suite (every `npm start -- --scenario`
 * end to end), the deep-DLQ and cost runs, Preflight over 50,000 envelopes. They are the `long`
 * project: `npm run test:long`, which `.ci/run` runs right after `npm test`. Every other file is
 * `npm test` (projects `unit` and `integration`).
 */
const LONG = [
  'test/crash/**/*.test.ts',
  'test/workflow/scenarios*.test.ts',
  'test/workflow/big-incident.test.ts',
  'test/workflow/redrive-cost.test.ts',
  'test/integration/preflight-at-scale.test.ts',
];

// One DynamoDB Local JVM for the run; every local stack gets a table of its own on it. The global
// setup launches it without waiting; each file of these projects waits until it answers.
const withLocalStack = {
  globalSetup: ['test/support/run-temp-dir.ts', 'test/support/global-setup.ts'],
  setupFiles: ['test/support/fresh-file.ts', 'test/support/shared-dynamo.ts', 'test/support/dynamo-ready.ts'],
};

/**
 * Workers for `npm test`: four per core. A test here spends most of its time waiting on the
 * clock the product waits on (visibility timeouts, the verification window, the ramp's dwells),
 * not on the CPU. Measured on the 2-core machine, quiet, `npm test` (949 tests), with files
 * grouped by project (test/support/sequencer.ts): 4 workers 216 s, 6 172 s, 8 143 s, with 240-254 s
 * of CPU in each (before the grouping: 2 workers 386 s, 4 234 s and 304 s of CPU).
 * `VITEST_MAX_WORKERS` overrides it.
 */
const WORKERS = Math.min(16, availableParallelism() * 4);

export default defineConfig({
  // Workspace packages (packages/*) resolve to their sources through tsconfig.json `paths`.
  resolve: { tsconfigPaths: true },
  test: {
    maxWorkers: WORKERS,
    sequence: { sequencer: LongestFirstSequencer },
    // Handlers log JSON lines; tests that expect failures would fill the output with ERROR lines.
    env: {
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      // EMF metric lines would fill the output; test/unit/metrics.test.ts turns them on.
      POWERTOOLS_METRICS_DISABLED: 'true',
      VITEST_TIMEOUT_SCALE: String(Math.min(4, load)),
    },
    testTimeout: scaled(120_000),
    hookTimeout: scaled(120_000),
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // Pure unit tests (no local stack; the files that change process.env or spy restore it
          // after each test) share one module graph per worker instead of re-importing the SDK,
          // zod and the handlers for every file: about 40% less CPU for test/unit (measured).
          isolate: false,
          globalSetup: ['test/support/run-temp-dir.ts'],
          setupFiles: ['test/support/shared-dynamo.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/unit/**', ...LONG],
          // One module graph per worker here too: re-importing the SDK, the handlers, the
          // stand-ins and aws-cdk-lib for every file cost more CPU than many files' tests
          // (test/integration: 186 s of CPU isolated, 110 s shared, measured). What a file must
          // not inherit is reset before each file (test/support/fresh-file.ts: process.env, the
          // clients, configuration and Slack objects built from it, the transfer fault hook).
          isolate: false,
          ...withLocalStack,
        },
      },
      // The long suites keep 2 workers (crash restarts, 100,000-message runs and the property each
      // load the machine on their own; `VITEST_MAX_WORKERS` overrides this too, as vitest applies it
      // to every project); run with the others (`vitest run`), they start after them.
      {
        extends: true,
        test: { name: 'long', include: LONG, maxWorkers: 2, sequence: { groupOrder: 1 }, ...withLocalStack },
      },
    ],
  },
});
