/**
 * The fault scenarios of `npm start -- --scenario NAME`, in the order `--scenario list` shows them.
 * To add one: write `local/demo/scenarios/<name>.ts` exporting a {@link Scenario}, add it to
 * {@link SCENARIOS}, and add its test to test/workflow/scenarios.test.ts (docs/local-run.md, "Fault
 * scenarios").
 */
import { consoleMoveTask } from './console-move-task.js';
import { consumerBreaksDuringRamp } from './consumer-breaks-during-ramp.js';
import { consumerStillBroken } from './consumer-still-broken.js';
import { crashAfterSend } from './crash-after-send.js';
import { delayQueue } from './delay-queue.js';
import { fifoDeepGroup } from './fifo-deep-group.js';
import { fifoRerun } from './fifo-rerun.js';
import { handDeleted } from './hand-deleted.js';
import { healthy } from './healthy.js';
import { latePoisonArrivals } from './late-poison-arrivals.js';
import { eventBridgeDlq, lambdaDlq, snsDlq } from './origin-dlq.js';
import { parkingQueueShrunk } from './parking-queue-shrunk.js';
import { selective } from './selective.js';
import type { Scenario } from './types.js';
import { unpark } from './unpark.js';

export type { Scenario, ScenarioContext, TerminalState } from './types.js';

/** Every scenario; the first is the default. */
export const SCENARIOS: readonly Scenario[] = [
  healthy,
  consumerStillBroken,
  consumerBreaksDuringRamp,
  latePoisonArrivals,
  delayQueue,
  consoleMoveTask,
  handDeleted,
  crashAfterSend,
  parkingQueueShrunk,
  selective,
  unpark,
  snsDlq,
  eventBridgeDlq,
  lambdaDlq,
  fifoDeepGroup,
  fifoRerun,
];

/** The scenario `npm start` runs without `--scenario`. */
export const DEFAULT_SCENARIO = healthy.name;

/** The scenario of that name, or undefined. */
export function scenarioNamed(name: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}

/** `--scenario list`: one line per scenario, its expected ending and what it shows. */
export function listScenarios(): string {
  const width = Math.max(...SCENARIOS.map((s) => s.name.length));
  return SCENARIOS.map(
    (s) =>
      `${s.name.padEnd(width)}  ${s.summary}${s.name === DEFAULT_SCENARIO ? ' [default]' : ''}\n${' '.repeat(width)}  expected: ${s.expected.outcome}: ${s.expected.text}`,
  ).join('\n');
}
