/**
 * A functions directory with a stub `handler.ts` for every catalogue function, for infra tests
 * that build a PipelineStack with bundling skipped (the real bundles are checked in
 * test/infra/pipeline-stack.test.ts). Under the repository's `.local/`, so esbuild and the
 * stack resolve it like the real one.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../infra/bundling.js';
import { FUNCTION_NAMES } from '../../infra/function-catalog.js';

/** Creates the directory; `remove()` deletes it. */
export function stubFunctionsDir(prefix: string): { dir: string; remove: () => void } {
  mkdirSync(join(REPO_ROOT, '.local'), { recursive: true });
  const dir = mkdtempSync(join(REPO_ROOT, '.local', prefix));
  for (const name of FUNCTION_NAMES) {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, 'handler.ts'), 'export const handler = async () => ({});\n');
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
