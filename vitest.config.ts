import { availableParallelism, loadavg } from 'node:os';
import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/sequencer.js';

// Timeouts catch hangs; they are not assertions. They grow with the load measured when the run
// starts (a second `npm test` beside this one doubles it), never below the quiet-machine values.
const load = Math.max(1, (loadavg()[0] ?? 0) / availableParallelism());
const scaled = (ms: number) => Math.round(ms * Math.min(4, load));

export default defineConfig({
  // Workspace packages (packages/*) resolve to their sources through tsconfig.json `paths`.
  resolve: { tsconfigPaths: true },
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    // One DynamoDB Local JVM for the whole run; every local stack gets a table of its own on it.
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/shared-dynamo.ts'],
    maxWorkers: 2,
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
  },
});
