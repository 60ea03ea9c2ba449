/**
 * Writes the parts of docs/ that restate the code: `npm run docs`. Each part sits between
 * `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` in its doc and is never edited by hand;
 * test/unit/docs-generated.test.ts fails when a doc differs from what {@link renderDocs} writes.
 *
 * The facts come from the code: the function list and every grant from packages/cdk/src/function-catalog.ts
 * (the stack builds each role from it), the state names from statemachines/redrive.asl.json, the
 * notifier's users from the functions' own sources.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  FUNCTION_ACCESS,
  FUNCTION_NAMES,
  type FunctionAccess,
  type FunctionName,
  placeholderOf,
} from '@dlq-redrive/cdk/function-catalog';
import { DEFAULT_DEFINITION_PATH, readDefinition } from '../infra/asl.js';
import { REMINDER_CHECK_MINUTES } from '../infra/constructs/slack-endpoint.js';

const ROOT = new URL('../', import.meta.url);

/**
 * What invokes the functions that no state of the definition names. A function neither here nor
 * in the definition stops the generation: say how it is invoked.
 */
const TRIGGERS: Partial<Record<FunctionName, string>> = {
  triage: 'EventBridge rule (alarm state changes) and SNS subscription',
  'slack-interaction': 'Function URL (Slack interactivity)',
  'execution-ended': "EventBridge rule: the state machine's ABORTED / TIMED_OUT / FAILED runs",
  'approval-reminder': `EventBridge schedule, every ${REMINDER_CHECK_MINUTES} minutes (retention reminders of waiting approvals)`,
};

const code = (s: string) => `\`${s}\``;
const list = (items: readonly string[]) =>
  items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
const names = (pick: (a: FunctionAccess, n: FunctionName) => boolean) =>
  FUNCTION_NAMES.filter((n) => pick(FUNCTION_ACCESS[n], n));

/** Task states of the definition, by the function placeholder they call (Resource or FunctionName). */
function statesByPlaceholder(definition: unknown): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const visit = (states: Record<string, Record<string, unknown>>) => {
    for (const [name, state] of Object.entries(states)) {
      const params = state.Parameters as Record<string, unknown> | undefined;
      const target = JSON.stringify([state.Resource, params?.FunctionName]);
      for (const m of target.matchAll(/\$\{([A-Za-z]+FunctionArn)\}/g)) {
        out.set(m[1] as string, [...(out.get(m[1] as string) ?? []), name]);
      }
      for (const branch of (state.Branches as { States: typeof states }[] | undefined) ?? [])
        visit(branch.States);
      const processor = (state.ItemProcessor ?? state.Iterator) as { States: typeof states } | undefined;
      if (processor) visit(processor.States);
    }
  };
  visit((definition as { States: Record<string, Record<string, unknown>> }).States);
  return out;
}

/** docs/contracts.md: every function folder, what invokes it, its placeholder. */
function functionTable(): string {
  const states = statesByPlaceholder(JSON.parse(readDefinition(DEFAULT_DEFINITION_PATH)));
  const rows = FUNCTION_NAMES.map((name) => {
    const used = states.get(placeholderOf(name));
    const trigger = used ? used.map(code).join(', ') : TRIGGERS[name];
    if (trigger === undefined) {
      throw new Error(`${name}: no state of the definition calls it; add its trigger to TRIGGERS`);
    }
    return `| ${code(name)} | ${trigger} | ${used ? code(`\${${placeholderOf(name)}}`) : '-'} |`;
  });
  return [
    '| folder | state(s) in the definition, or trigger | placeholder in the ASL |',
    '| --- | --- | --- |',
    ...rows,
  ].join('\n');
}

const sqs = (actions: readonly string[]) =>
  actions.length === 0 ? '-' : actions.map((a) => a.replace(/^sqs:/, '')).join(', ');

/** The "other" column of the permissions table: every grant that is not on a registered queue. */
function otherGrants(name: FunctionName): string {
  const a = FUNCTION_ACCESS[name];
  const out: string[] = [];
  if (a.table !== 'none') out.push(a.table === 'read' ? 'table (read)' : 'table');
  if (a.slackSecret) out.push('Slack secret');
  if (a.stateMachine.length > 0) {
    const note = a.stateMachine.includes('states:StartExecution') ? ' (through the alias only)' : '';
    out.push(`${a.stateMachine.map(code).join(', ')}${note}`);
  }
  if (a.executions.length > 0) out.push(`${a.executions.map(code).join(', ')} on its executions`);
  if (a.alarms?.length) out.push(`${a.alarms.map(code).join(', ')} on the account's alarms`);
  if (a.keys?.length) out.push(`${a.keys.map(code).join(', ')} on registered keys`);
  if (a.pipelineRoles?.length)
    out.push(`${a.pipelineRoles.map(code).join(', ')} on the roles that use queue keys`);
  if (a.payloadBuckets?.length)
    out.push(`${a.payloadBuckets.map(code).join(', ')} on registered payload buckets`);
  if (a.originTargets) {
    const t = a.originTargets;
    out.push(`${[...t.sns, ...t.eventbridge, ...t.lambda].map(code).join(', ')} on registered origins`);
  }
  if (a.accessRoles?.length) out.push(`${a.accessRoles.map(code).join(', ')} on registered access roles`);
  if (a.selfInvoke) out.push('invoke itself');
  return out.join('; ') || '-';
}

/** docs/deploy.md: every function's grants, as packages/cdk/src/function-catalog.ts lists them. */
function permissionTable(): string {
  const rows = FUNCTION_NAMES.map((name) => {
    const a = FUNCTION_ACCESS[name];
    return `| ${code(name)} | ${sqs(a.dlq)} | ${sqs(a.sourceQueues)} | ${sqs(a.parkingQueue)} | ${otherGrants(name)} |`;
  });
  return [
    '| function | on registered DLQs | on their source queues | on the parking queue | other |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

/** Functions whose own folder calls `sharedNotifier(` (Slack when configured, else the logs). */
function notifierUsers(): FunctionName[] {
  return FUNCTION_NAMES.filter((name) => {
    const dir = new URL(`functions/${name}/`, ROOT);
    return readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .some((f) => readFileSync(new URL(f, dir), 'utf8').includes('sharedNotifier('));
  });
}

/** Every generated part: its name, then its exact text. */
export function generatedParts(): Record<string, string> {
  const secretReaders = names((a) => a.slackSecret).map(code);
  return {
    'function-count': String(FUNCTION_NAMES.length),
    'function-table': functionTable(),
    'permission-table': permissionTable(),
    'slack-secret-readers': list(secretReaders),
    'slack-secret-readers-table': secretReaders.join(', '),
    'state-machine-callers': list(names((a) => a.stateMachine.length > 0).map(code)),
    'notifier-users': list(notifierUsers().map(code)),
  };
}

/** The docs that hold generated parts. */
export const GENERATED_DOCS = [
  'docs/contracts.md',
  'docs/deploy.md',
  'docs/local-run.md',
  'docs/slack.md',
] as const;

/**
 * A doc's text with each generated part replaced by its current value.
 * @throws Error naming a part the doc opens but never closes, or one {@link generatedParts} lacks.
 */
export function renderDoc(text: string, parts: Readonly<Record<string, string>> = generatedParts()): string {
  let closed = 0;
  const out = text.replace(
    /(<!-- generated:([a-z-]+) -->)([\s\S]*?)(<!-- \/generated:\2 -->)/g,
    (_all, open: string, name: string, old: string, close: string) => {
      const value = parts[name];
      if (value === undefined) throw new Error(`no generated part named ${name}`);
      closed += 1;
      // A part on lines of its own (a table) keeps its own lines; an inline one stays inline.
      return old.startsWith('\n') ? `${open}\n${value}\n${close}` : `${open}${value}${close}`;
    },
  );
  const opened = text.match(/<!-- generated:[a-z-]+ -->/g)?.length ?? 0;
  if (opened !== closed) throw new Error(`${opened - closed} generated part(s) opened but never closed`);
  return out;
}

/** Every doc with generated parts: path relative to the repository root, then its text as rendered. */
export function renderDocs(): Record<string, string> {
  const parts = generatedParts();
  return Object.fromEntries(
    GENERATED_DOCS.map((path) => [path, renderDoc(readFileSync(new URL(path, ROOT), 'utf8'), parts)]),
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [path, text] of Object.entries(renderDocs())) {
    if (readFileSync(new URL(path, ROOT), 'utf8') === text) continue;
    writeFileSync(new URL(path, ROOT), text);
    console.log(`wrote ${path}`);
  }
}
