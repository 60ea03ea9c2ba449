/**
 * The order test files start in: one project's files together, and in each project longest
 * first, so that no long file starts last and runs alone at the end
 * (longest-processing-time-first scheduling).
 *
 * A file's length is its duration in vitest's results cache (`node_modules/.vite`, written by the
 * previous run on this checkout). A fresh clone, as CI has, has no cache: vitest's own order is
 * then by file size, which starts the short-sourced but long-running workflow scenarios last. For
 * a file without a cached duration its measured duration (the long files are named) or its
 * folder's typical one stands in.
 *
 * @see https://vitest.dev/config/#sequence-sequencer
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Typical duration of a file the cache does not know, milliseconds: the long files by name, then
 * by folder (first match wins). Measured on the 2-core machine, quiet; a file's order matters only
 * against the others. A fresh clone (CI) has no cache: a long file this list does not name starts
 * late and can run alone at the end (reconcile-after-failure, 61 s, unnamed: 181 s on a fresh
 * clone against 143 s with the cache).
 */
const TYPICAL_MS: ReadonlyArray<readonly [prefix: string, ms: number]> = [
  // npm run test:long: the restart after a crashed triage waits out a hold (~180 s), the property ~140 s.
  ['test/crash/', 120_000],
  // The real bundles of all 14 functions in its beforeAll (about 20 s under load, which vitest's
  // file duration leaves out: 7.8 s), then the CloudFormation validation.
  ['test/infra/pipeline-stack.test.ts', 30_000],
  // npm test on 8 workers, quiet machine (e0ce226): every file of 7 s or more.
  ['test/workflow/reconcile-after-failure.test.ts', 61_400],
  ['test/workflow/redrive-happy.test.ts', 58_700],
  ['test/workflow/redrive-guards.test.ts', 52_300],
  ['test/integration/park-batches.test.ts', 37_600],
  ['packages/consumer-idempotency/test/local-stack.test.ts', 33_900],
  ['test/integration/reconcile.test.ts', 33_200],
  ['test/workflow/redrive-crash.test.ts', 31_400],
  ['test/integration/mover.test.ts', 31_400],
  ['test/integration/verify-sample.test.ts', 31_100],
  ['test/integration/redrive-hostile.test.ts', 29_400],
  ['test/integration/redrive-hostile-sample.test.ts', 28_200],
  ['test/integration/sample-redrive.test.ts', 23_800],
  ['test/workflow/redrive-mover.test.ts', 23_800],
  ['test/integration/park.test.ts', 22_800],
  ['test/workflow/mover-cross-account.test.ts', 19_500],
  ['test/workflow/cli-runs.test.ts', 16_400],
  ['test/integration/ledger-ownership.test.ts', 14_800],
  ['test/integration/triage.test.ts', 14_600],
  ['test/unit/crash-matrix-plan.test.ts', 14_000],
  ['test/integration/slack-workflow.test.ts', 13_800],
  ['test/cli/cli-arguments.test.ts', 13_800],
  ['test/unit/big-incident-payloads.test.ts', 12_700],
  ['test/unit/npm-start-args.test.ts', 11_900],
  ['test/integration/extended-client.test.ts', 11_700],
  ['test/unit/asl.test.ts', 11_600],
  ['test/integration/triage-budgets.test.ts', 10_600],
  ['test/integration/move-task.test.ts', 10_300],
  ['packages/consumer-idempotency/test/entry-point.test.ts', 10_000],
  ['test/integration/triage-after-crash.test.ts', 9_700],
  ['test/integration/triage-hostile.test.ts', 9_300],
  ['test/integration/fifo-deep-groups.test.ts', 9_200],
  ['test/infra/monitored-dlq.test.ts', 9_000],
  ['test/workflow/', 5_000],
  ['test/infra/', 5_000],
  ['packages/', 3_000],
  ['test/integration/', 3_000],
  ['test/cli/', 3_000],
];
const OTHER_MS = 1_000;

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const expected = (spec: TestSpecification): number => {
      const path = relative(root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path}`);
      if (cached && cached.duration > 0) return cached.duration;
      return TYPICAL_MS.find(([prefix]) => path.startsWith(prefix))?.[1] ?? OTHER_MS;
    };
    const byLength = (await super.sort(files)).map((spec, order) => ({ spec, order, ms: expected(spec) }));
    // Stable: equal expectations keep vitest's order (by file size).
    byLength.sort((a, b) => b.ms - a.ms || a.order - b.order);
    // One project's files together, the project with the longest file first: vitest hands a
    // finished non-isolated worker the next file only when that file is of the same project, and
    // otherwise stops it and starts a new one that imports the SDK, the handlers and the stand-ins
    // again. Interleaved by length, `unit` and `integration` started 26 workers in one run of
    // `npm test` (4 workers); grouped, each project starts at most maxWorkers.
    const projects = [...new Set(byLength.map(({ spec }) => spec.project.name))];
    return byLength
      .sort((a, b) => projects.indexOf(a.spec.project.name) - projects.indexOf(b.spec.project.name))
      .map(({ spec }) => spec);
  }
}
