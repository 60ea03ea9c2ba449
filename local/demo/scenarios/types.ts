/**
 * The contract of a fault scenario (`npm start -- --scenario NAME`, docs/local-run.md "Fault
 * scenarios"). A scenario is data plus a few hooks around one local run: the incident it prepares,
 * what it does to the run (a consumer that breaks again, messages that arrive late, a move task
 * started by hand...), the ending it expects, and the checks that decide whether the run ended as
 * expected. {@link runScenario} (local/demo/run-scenario.ts) runs every scenario on the same path:
 * the local stack, the real triage handler, the real ASL and the real task handlers.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Standins } from '../../aws-standins/index.js';
import type { ExecutionResult, RunnerOptions } from '../../runner.js';
import type { LocalStackOptions } from '../../stack.js';
import type { LocalWorkflowStarter } from '../../workflow-starter-local.js';
import type { RunReport } from '../report.js';
import type { PreparedIncident, ScenarioOptions } from '../scenario.js';

/** The terminal states of statemachines/redrive.asl.json a run can end in. */
export type TerminalState =
  | 'Done'
  | 'NothingToRedrive'
  | 'ApprovalRejected'
  | 'RedriveRefused'
  | 'ApprovalExpired'
  | 'SampleFailed'
  | 'RedriveHalted'
  | 'Failed';

/** What a scenario hook can see and do while the run goes on. */
export interface ScenarioContext {
  readonly sqs: SQSClient;
  /** The queues, the registration, the produced messages and the running consumer. */
  readonly incident: PreparedIncident;
  /** Prints one line of the run's story (stderr under `--json`). */
  say(line: string): void;
  /** Seconds since the run started, formatted (`12.3s`). */
  elapsed(): string;
  /** The latest result of each Task state so far, by state name. */
  readonly taskResults: Readonly<Record<string, unknown>>;
  /** The latest `$.ramp` (StartMoveTask, CheckProgress, StepUp or ResumeRamp, whichever ran last). */
  readonly ramp: Readonly<Record<string, unknown>> | undefined;
  /** Free slot for a scenario's own facts (a break time, a hand-started task handle...). */
  readonly notes: Record<string, unknown>;
  /** The workflow starter, once triage runs (an `afterRun` may start a second run with it). */
  readonly starter: LocalWorkflowStarter | undefined;
  /** The in-process stand-ins (SNS, EventBridge, Lambda...), when the run has them: what reached a target. */
  readonly standins: Standins | undefined;
  /**
   * Runs an `afterRun` started after the main one (an un-park run of the same incident): each gets
   * its own line in the report, with its own outcome, reason and counts (the report's top-level
   * figures are the main run's).
   */
  readonly laterRuns: ExecutionResult[];
}

/** An exposure bound, in messages, with how it was computed (shown beside the figure). */
export interface ExposureBound {
  value: number;
  basis: string;
}

/**
 * One fault scenario. Only `name`, `summary` and `expected` are required; the hooks default to the
 * healthy demo (the consumer is fixed when the redrive is approved).
 */
export interface Scenario {
  /** The `--scenario` value: kebab-case. */
  readonly name: string;
  /** One line for `--scenario list`: what happens and what it shows. */
  readonly summary: string;
  /** The ending the run must reach to pass (an expected halt is a pass). */
  readonly expected: {
    /** The terminal state of the execution. */
    outcome: TerminalState;
    /** The rest of the expectation in words, shown in the list and the report. */
    text: string;
  };
  /**
   * The incident to prepare, given the `--messages` value (undefined: the scenario's own size).
   * Queue names must be unique per scenario: tests run several scenarios on one stack.
   */
  incident(messages: number | undefined): ScenarioOptions & { name: string };
  /**
   * Execution input fields triage does not set, as an operator adds them from the console or the
   * CLI (a selection, un-park, a transform).
   */
  readonly input?: Record<string, unknown>;
  /**
   * Local stack options the scenario needs (`npm start` starts its stack with them; a test that
   * runs the scenario starts its own with the same).
   */
  readonly stack?: Pick<LocalStackOptions, 'sqsEnforcesKms'>;
  /** Extra runner options (Task bindings, Wait overrides) for this scenario. */
  runner?(ctx: ScenarioContext): Partial<RunnerOptions>;
  /** Runs once the DLQ is full, before the alarm fires and triage runs. */
  beforeTriage?(ctx: ScenarioContext): Promise<void>;
  /** Runs when the approval arrives. @default the fix is deployed: `consumer.endOutage()` */
  onApproved?(ctx: ScenarioContext): void | Promise<void>;
  /**
   * Sees each Task's result as it completes; the execution waits for a returned promise, so a
   * hook can act between two states (start a move task by hand during the verification wait).
   */
  onTaskResult?(ctx: ScenarioContext, state: string, result: unknown): void | Promise<void>;
  /**
   * Runs once the execution has ended, before the report is built: gather facts for `check`
   * (into `ctx.notes`) or clean up what the scenario did by hand (cancel a task it started).
   */
  afterRun?(ctx: ScenarioContext): Promise<void>;
  /** The exposure bound that applies. @default {@link policyExposureBound} in run-scenario.ts */
  exposureBound?(ctx: ScenarioContext, report: RunReport): ExposureBound;
  /** What a redrive with no gate would have exposed in this run (bench:exposure's comparison). */
  gatelessExposure?(ctx: ScenarioContext, report: RunReport): ExposureBound;
  /**
   * What else must hold, besides the terminal state: each returned string is one problem, and the
   * run passes only with none. @default counts add up and nothing missing.
   */
  check?(report: RunReport, ctx: ScenarioContext): string[];
}
