/**
 * A fault-injection seam for the local stack: a Lambda invocation "crashes" right after an AWS call
 * of a chosen call site has completed, the way a runtime killed at that instant would leave things:
 * the call's effect happened, nothing after it did.
 *
 * How it works: {@link FaultInjector.install} adds one middleware to the shared SDK clients
 * (`#platform/clients.js`: SQS, DynamoDB and its document client, Step Functions). The local
 * runner (or a harness) runs each invocation through {@link FaultInjector.invoke}, which tags it
 * with an `AsyncLocalStorage` context, so the middleware knows which function made a call and
 * calls made outside any invocation (the demo consumer, the test's own checks) are never touched.
 * A call site is the first stack frame of the call inside `functions/` or `packages/`
 * (`functions/shared/transfer/redrive-ledger.ts:301`): the place in the code that called AWS.
 *
 * Armed with a {@link CrashPlan}, the first call at that site (in an invocation of that function)
 * runs to completion and then throws {@link SimulatedCrash}; from then on every AWS call of that
 * invocation throws before it is sent (a dead process makes no calls: no `finally` block releases
 * a message or writes a record). The invocation then fails with `Lambda.Unknown` (a runtime that
 * died: Step Functions retries it where the ASL says so) or, for a crash that must not be retried,
 * `Local.Crashed` (the execution fails and a person restarts it from the console).
 *
 * Nothing in `functions/` knows about this module; it is for the local runner, the demo's fault
 * scenarios and the crash tests only.
 *
 * @see https://docs.aws.amazon.com/sdk-for-javascript/v3/developer-guide/middleware.html
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { dynamoClient, sfnClient, sqsClient } from '#platform/clients.js';

/** One AWS call an invocation made. */
export interface CallRecord {
  /** The function folder (`park`, `sample-redrive`, `triage`...). */
  functionFolder: string;
  /** SDK command name (`SendMessageCommand`, `PutItemCommand`...). */
  command: string;
  /** `path:line` of the first frame in `functions/` or `packages/`. */
  site: string;
}

/** Where to crash: the first call in an invocation of `functionFolder` that matches `site` and `command` (each when given). */
export interface CrashPlan {
  functionFolder: string;
  site?: string;
  command?: string;
  /** `retry`: fail as `Lambda.Unknown`; `restart`: fail as `Local.Crashed` (not retried). */
  mode: 'retry' | 'restart';
}

/** Thrown inside the crashed invocation (after the chosen call, and by every call after it). */
export class SimulatedCrash extends Error {
  public override readonly name = 'SimulatedCrash';
}

/** What a crashed invocation throws to its caller, by mode. */
export const CRASH_ERROR_NAMES = { retry: 'Lambda.Unknown', restart: 'Local.Crashed' } as const;

interface Invocation {
  functionFolder: string;
  dead: boolean;
}

type Stack = {
  add(middleware: unknown, options: { step: string; name: string }): void;
  remove(name: string): boolean;
  identify(): string[];
};
let instances = 0;
const ROOT = new URL('../', import.meta.url).pathname;

/** Wrappers every AWS call goes through; the call site is the frame above them. */
const PASS_THROUGH = new Set(['functions/shared/platform/deadline.ts']);

/** The call site: first frame of the project's code outside this file and node_modules. */
export function callSiteOf(stack: string | undefined): string {
  for (const line of (stack ?? '').split('\n').slice(1)) {
    const match = /\(?((?:file:\/\/)?\/[^():]+):(\d+):\d+\)?\s*$/.exec(line);
    if (!match) continue;
    const path = (match[1] as string).replace(/^file:\/\//, '');
    if (path.includes('/node_modules/') || !path.startsWith(ROOT)) continue;
    const relative = path.slice(ROOT.length);
    // The per-call deadline wrapper is not a call site: the frame that called it is.
    if (PASS_THROUGH.has(relative)) continue;
    if (relative.startsWith('functions/') || relative.startsWith('packages/'))
      return `${relative}:${match[2]}`;
  }
  return 'unknown';
}

/**
 * Frames kept when a call site is read. V8 keeps 10 by default, and every other injector installed
 * on the shared clients (concurrent cells of the crash matrix) adds a frame above the project's
 * call: with the default, a deep call's site fell off the trace as `unknown`, so a cell planned at
 * it was "never injected" or not, by how many cells ran beside it.
 */
const SITE_STACK_FRAMES = 200;

function stackTrace(): string | undefined {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = SITE_STACK_FRAMES;
  try {
    return new Error().stack;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** See the module comment. */
export class FaultInjector {
  /** Every call made inside an invocation, in order. */
  public readonly calls: CallRecord[] = [];
  /** Crashes injected so far (each with the call it came right after). */
  public readonly crashes: Array<CallRecord & { mode: CrashPlan['mode'] }> = [];
  private readonly context = new AsyncLocalStorage<Invocation>();
  private readonly name = `localFaultInjection${++instances}`;
  private plan: CrashPlan | undefined;

  /**
   * Adds this injector's middleware to the shared clients (call again after `resetClients()`).
   * Idempotent per client. Several injectors may be installed at once (concurrent runs): each acts
   * only on the invocations it runs.
   */
  public install(): void {
    for (const client of [sqsClient(), dynamoClient(), sfnClient()]) {
      const stack = client.middlewareStack as unknown as Stack;
      if (stack.identify().some((m) => m.split(' ')[0] === this.name)) continue;
      stack.add(this.middleware(), { step: 'initialize', name: this.name });
    }
  }

  /** Removes this injector's middleware from the shared clients. */
  public uninstall(): void {
    for (const client of [sqsClient(), dynamoClient(), sfnClient()])
      (client.middlewareStack as unknown as Stack).remove(this.name);
  }

  /** Crash at the first call of `plan.site` in an invocation of `plan.functionFolder`. */
  public arm(plan: CrashPlan): void {
    this.plan = plan;
  }

  /** No crash is armed any more (a crash already injected stays in {@link crashes}). */
  public disarm(): void {
    this.plan = undefined;
  }

  /**
   * Runs one invocation of `functionFolder`. A crash inside it surfaces as an error named
   * `Lambda.Unknown` or `Local.Crashed` (by the plan's mode), whatever the handler made of it.
   */
  public async invoke<T>(functionFolder: string, fn: () => Promise<T>): Promise<T> {
    const invocation: Invocation = { functionFolder, dead: false };
    try {
      return await this.context.run(invocation, fn);
    } catch (error) {
      if (!invocation.dead) throw error;
      const last = this.crashes.at(-1);
      const crash = new Error(
        `RequestId: local Error: Runtime exited with error: signal: killed (injected after ${last?.command} at ${last?.site})`,
      );
      crash.name = CRASH_ERROR_NAMES[last?.mode ?? 'retry'];
      throw crash;
    }
  }

  /** The distinct call sites each function reached, in first-seen order. */
  public sites(): Map<string, CallRecord[]> {
    const byFunction = new Map<string, CallRecord[]>();
    for (const call of this.calls) {
      const list = byFunction.get(call.functionFolder) ?? [];
      if (!list.some((c) => c.site === call.site)) list.push(call);
      byFunction.set(call.functionFolder, list);
    }
    return byFunction;
  }

  private middleware() {
    return (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) =>
      async (args: unknown) => {
        const invocation = this.context.getStore();
        if (!invocation) return next(args);
        if (invocation.dead) throw new SimulatedCrash('the runtime is gone: no call leaves a dead process');
        const call: CallRecord = {
          functionFolder: invocation.functionFolder,
          command: context.commandName ?? 'unknown',
          site: callSiteOf(stackTrace()),
        };
        const out = await next(args);
        this.calls.push(call);
        const plan = this.plan;
        if (
          plan &&
          plan.functionFolder === call.functionFolder &&
          (plan.site === undefined || plan.site === call.site) &&
          (plan.command === undefined || plan.command === call.command)
        ) {
          this.plan = undefined;
          invocation.dead = true;
          this.crashes.push({ ...call, mode: plan.mode });
          throw new SimulatedCrash(`crash right after ${call.command} at ${call.site}`);
        }
        return out;
      };
  }
}
