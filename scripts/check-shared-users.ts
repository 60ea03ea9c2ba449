/**
 * `npm run lint` part: every file in functions/shared/ is reached (directly or through other shared
 * files) by at least two users: function folders, or the dlq CLI (`cli/`, which validates what it
 * sends as the pipeline does: the execution input schema has ValidateInput and the CLI as users).
 * A file only one function uses belongs in that folder (docs/layout.md). Reads dependency-cruiser's
 * JSON output with the project's rules.
 *
 * Exits 1 listing each offending file and the one function that reaches it.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

interface CruisedModule {
  source: string;
  dependencies: Array<{ resolved: string }>;
}

/** Function folders (functions/<name>/, not shared), and `cli` for the dlq CLI, that reach each shared module. */
export function sharedUsers(modules: readonly CruisedModule[]): Map<string, Set<string>> {
  const deps = new Map(modules.map((m) => [m.source, m.dependencies.map((d) => d.resolved)]));
  const users = new Map<string, Set<string>>();
  for (const m of modules) if (m.source.startsWith('functions/shared/')) users.set(m.source, new Set());
  for (const m of modules) {
    const fn = m.source.startsWith('cli/') ? 'cli' : /^functions\/(?!shared\/)([^/]+)\//.exec(m.source)?.[1];
    if (!fn) continue;
    const seen = new Set<string>();
    const stack = [...(deps.get(m.source) ?? [])];
    while (stack.length > 0) {
      const next = stack.pop() as string;
      if (seen.has(next)) continue;
      seen.add(next);
      users.get(next)?.add(fn);
      stack.push(...(deps.get(next) ?? []));
    }
  }
  return users;
}

/**
 * Files allowed a single user for now, each with the reason and the issue that ends it (none
 * today: cancel-requests.ts and processed-keys.ts, the last two, gained their second users).
 */
const PENDING: Record<string, string> = {};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const json = execFileSync(
    'depcruise',
    ['functions', 'cli', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const { modules } = JSON.parse(json) as { modules: CruisedModule[] };
  const single = [...sharedUsers(modules)].filter(([file, fns]) => fns.size < 2 && !(file in PENDING));
  for (const [file, fns] of single)
    console.error(
      `${file}: used by ${fns.size === 0 ? 'no function' : `only ${[...fns][0] === 'cli' ? 'the dlq CLI' : `functions/${[...fns][0]}`}`}; move it next to its user (docs/layout.md)`,
    );
  if (single.length > 0) process.exit(1);
  console.log(
    `shared files: each reached by two or more users: functions or the dlq CLI (${modules.length} modules)`,
  );
}
