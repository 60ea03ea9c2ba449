/**
 * The order test files start in: longest first, so that on 2 workers no long file starts last
 * and runs alone at the end (longest-processing-time-first scheduling).
 *
 * A file's length is its duration in vitest's results cache (`node_modules/.vite`, written by the
 * previous run on this checkout). A fresh clone, as CI has, has no cache: vitest's own order is
 * then by file size, which starts the short-sourced but long-running workflow scenarios last. For
 * a file without a cached duration the folder's typical duration stands in (measured on the 2-core
 * machine: the workflow scenarios and the infra synth tests take tens of seconds each, unit files
 * well under a second).
 *
 * @see https://vitest.dev/config/#sequence-sequencer
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Typical duration of a file by folder, milliseconds, for a file the cache does not know. */
const TYPICAL_MS: ReadonlyArray<readonly [prefix: string, ms: number]> = [
  // npm run test:long: the restart after a crashed triage waits out a hold (~180 s), the property ~140 s.
  ['test/crash/', 120_000],
  ['test/workflow/', 40_000],
  ['test/infra/', 25_000],
  ['packages/', 15_000],
  ['test/integration/', 10_000],
  ['test/cli/', 8_000],
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
    return byLength.sort((a, b) => b.ms - a.ms || a.order - b.order).map(({ spec }) => spec);
  }
}
