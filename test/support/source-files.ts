/**
 * The TypeScript files under functions/ (paths relative to it, with their text), for tests that
 * check a rule over the whole pipeline source (config and client construction, error classes).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const FUNCTIONS = new URL('../../functions/', import.meta.url).pathname;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? tsFiles(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

/** Every `functions/**\/*.ts` as `{ path, text }`, `path` relative to functions/ (e.g. `shared/platform/config.ts`). */
export function functionSources(): Array<{ path: string; text: string }> {
  return tsFiles(FUNCTIONS).map((file) => ({
    path: relative(FUNCTIONS, file),
    text: readFileSync(file, 'utf8'),
  }));
}

/** `text` without its comments, so a rule about code is not tripped by a TSDoc line. */
export function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
}
