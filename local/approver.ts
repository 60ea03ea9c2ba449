/**
 * Local approvers for the `RequestApproval` callback Task.
 *
 * On AWS the Task posts an approval request to Slack and waits for its task token; the Slack
 * interaction handler answers with `SendTaskSuccess`. Locally the runner issues the token and
 * hands the request to an {@link Approver}, which answers through the same two calls
 * ({@link TaskTokenCallbacks}). Built in: a terminal prompt (stdin is a TTY), `--approve` /
 * `--reject` flags, and auto-approval when stdin is not a TTY. Other approvers (for example
 * `--approve-via slack`, which runs the real request-approval and interaction handlers over a local
 * HTTP callback) register themselves with {@link registerApprover}.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/connect-to-resource.html#connect-wait-token
 */
import { createInterface } from 'node:readline/promises';
import { createIncidentStore } from '#incident/incident-store.js';
import { buildOnCallReport, onCallReportLines, stepSecondsText } from '#incident/on-call-report.js';
import { clockText } from '#platform/clock-text.js';
import { approverFlags } from './approver-flags.js';
import type { TaskTokenCallbacks } from './task-tokens.js';
import { takeTerminal } from './terminal.js';

/** What the approval Task returns (`$.approval`, docs/contracts.md). */
export interface ApprovalDecision {
  decision: 'approved' | 'rejected';
  approvedBy: string | null;
  reason: string | null;
}

/** One pending approval, as the runner hands it to an approver. */
export interface ApprovalRequest {
  /** The token to answer with; closed when the Task's TimeoutSeconds passes. */
  taskToken: string;
  /** Name of the local execution. */
  executionName: string;
  /** The Task's effective input (its `Parameters` applied): plan, preflight, summary... */
  payload: unknown;
  /** The Task's TimeoutSeconds, or null when it has none. */
  timeoutSeconds: number | null;
}

/**
 * Answers approval requests. `requestApproval` may answer before returning, later (a prompt, an
 * HTTP callback), or never (the Task then times out).
 */
export interface Approver {
  readonly name: string;
  /**
   * Set when no person decides: the rule that does (the audit trail records it beside the
   * decision, so `dlq show` says the run was approved by policy and which one).
   */
  readonly policy?: string;
  requestApproval(request: ApprovalRequest, callbacks: TaskTokenCallbacks): Promise<void>;
}

/** Approves (or rejects) every request at once, as `by`. */
export function fixedApprover(decision: 'approved' | 'rejected', by = 'local-operator'): Approver {
  return {
    name: decision === 'approved' ? 'approve' : 'reject',
    async requestApproval(request, callbacks) {
      const answer: ApprovalDecision =
        decision === 'approved'
          ? { decision, approvedBy: by, reason: null }
          : { decision, approvedBy: by, reason: 'rejected locally (--reject)' };
      await callbacks.sendTaskSuccess(request.taskToken, answer);
    },
  };
}

/** Approves every request automatically (stdin is not a terminal, e.g. CI). */
export function autoApprover(): Approver {
  return {
    ...fixedApprover('approved', 'local-auto-approval'),
    name: 'auto',
    policy:
      'npm start auto-approves every request when stdin is not a terminal and no --approve, --reject or --approve-via is given',
  };
}

/** Never answers: the approval Task's TimeoutSeconds decides (tests of approval expiry). */
export function silentApprover(): Approver {
  return { name: 'silent', requestApproval: async () => undefined };
}

/** Options of {@link terminalApprover}. */
export interface TerminalApproverOptions {
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  /** Prints the request before the question; default: the on-call report and the plan ({@link describeRequest}). */
  describe?: (request: ApprovalRequest) => string | Promise<string>;
}

/**
 * The approval request as the terminal shows it: the incident's on-call report (what failed, how
 * many, since when, first expiry, warnings in full, the same lines `dlq show` prints), then the
 * plan and when the approval expires, as UTC clock times.
 */
export async function describeRequest(request: ApprovalRequest, nowMs: number = Date.now()): Promise<string> {
  const payload = (request.payload ?? {}) as {
    plan?: {
      incidentId?: string;
      dlqArn?: string;
      rampRates?: number[];
      sampleSize?: number;
      dwellSeconds?: number;
      mode?: string;
    };
    preflight?: {
      dlqDepth?: number;
      parkingDepth?: number;
      warnings?: string[];
      verifyWindowSeconds?: number;
    };
  };
  const incidentId = payload.plan?.incidentId;
  const incident = incidentId
    ? await createIncidentStore()
        .getIncident(incidentId)
        .catch(() => undefined)
    : undefined;
  // This run's preflight warnings stand where a run's recorded warnings stand: they replace the
  // summary's generic ones they cover (FIFO order, do-not-redrive, no source).
  const report = incident
    ? buildOnCallReport(
        payload.preflight?.warnings
          ? ({ ...incident, warnings: payload.preflight.warnings } as typeof incident)
          : incident,
        [],
        nowMs,
      )
    : null;
  const lines = [
    `Approval requested for execution ${request.executionName}`,
    `incident:       ${incidentId ?? '?'}`,
    payload.preflight?.parkingDepth !== undefined
      ? `DLQ:            ${payload.plan?.dlqArn ?? '?'} (un-park: ${payload.preflight.parkingDepth} messages in its parking queue now)`
      : `DLQ:            ${payload.plan?.dlqArn ?? '?'} (${payload.preflight?.dlqDepth ?? '?'} messages now)`,
    ...(report ? onCallReportLines(report, nowMs).filter((l) => !l.startsWith('redrive:')) : []),
    `plan:           ${payload.plan?.mode ?? 'redrive'}, sample ${payload.plan?.sampleSize ?? '?'}, ramp ${(payload.plan?.rampRates ?? []).join(' -> ')} msg/s, ${payload.plan?.dwellSeconds === undefined ? '? s per step' : stepSecondsText(payload.plan.dwellSeconds, payload.preflight?.verifyWindowSeconds)}`,
  ];
  if (!report && (payload.preflight?.warnings ?? []).length > 0)
    lines.push('warnings:', ...(payload.preflight?.warnings ?? []).map((w) => `  ! ${w}`));
  if (request.timeoutSeconds !== null)
    lines.push(`expires:        ${clockText(nowMs + request.timeoutSeconds * 1000, nowMs)}`);
  return lines.join('\n');
}

/** Asks on the terminal: `y` approves, anything else rejects. */
export function terminalApprover(options: TerminalApproverOptions = {}): Approver {
  return {
    name: 'prompt',
    async requestApproval(request, callbacks) {
      const output = options.output ?? process.stdout;
      // Progress bars stop first: a redraw would erase the question while it waits.
      await takeTerminal();
      const rl = createInterface({ input: options.input ?? process.stdin, output, terminal: true });
      try {
        output.write(`${await (options.describe ?? describeRequest)(request)}\n`);
        const answer = (await rl.question('Approve this redrive? [y/N] ')).trim().toLowerCase();
        const user = process.env.USER ?? 'local-operator';
        const decision: ApprovalDecision =
          answer === 'y' || answer === 'yes'
            ? { decision: 'approved', approvedBy: user, reason: null }
            : { decision: 'rejected', approvedBy: user, reason: 'rejected at the terminal prompt' };
        await callbacks.sendTaskSuccess(request.taskToken, decision);
      } finally {
        rl.close();
      }
    },
  };
}

/** Builds an approver for `--approve-via <name>`. */
export type ApproverFactory = () => Approver | Promise<Approver>;
const registry = new Map<string, ApproverFactory>();

/**
 * Makes `--approve-via <name>` available (the Slack part registers `slack`).
 * @throws Error when `name` is already registered.
 */
export function registerApprover(name: string, factory: ApproverFactory): void {
  if (registry.has(name)) throw new Error(`approver "${name}" is already registered`);
  registry.set(name, factory);
}

/** Names accepted by `--approve-via`. */
export function registeredApprovers(): string[] {
  return [...registry.keys()];
}

/**
 * Chooses the approver from command-line flags: `--approve`, `--reject`, `--approve-via <name>`;
 * with none of them, a terminal prompt when stdin is a TTY, else auto-approval.
 *
 * @throws Error naming the flag when flags conflict or `--approve-via` names an unknown approver.
 */
export async function approverFromArgs(
  argv: readonly string[],
  isTTY: boolean = process.stdin.isTTY === true,
): Promise<Approver> {
  const { approve, reject, viaIndex, via } = approverFlags(argv);
  if (viaIndex >= 0 && (via === undefined || via.startsWith('--')))
    throw new Error(`--approve-via: needs a name (${registeredApprovers().join(', ') || 'none registered'})`);
  if (approve) return fixedApprover('approved', process.env.USER ?? 'local-operator');
  if (reject) return fixedApprover('rejected', process.env.USER ?? 'local-operator');
  if (via !== undefined) {
    const factory = registry.get(via);
    if (!factory)
      throw new Error(
        `--approve-via: unknown approver "${via}" (known: ${registeredApprovers().join(', ') || 'none'})`,
      );
    return factory();
  }
  return isTTY ? terminalApprover() : autoApprover();
}
