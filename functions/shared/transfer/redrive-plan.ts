/**
 * Pure checks of a redrive plan against what SQS can do, run by Preflight before any API call
 * where possible:
 *
 * - every ramp rate is an integer 1..500 messages per second (StartMessageMoveTask's cap);
 * - the plan can move the backlog: a move task runs at most 36 hours, so the last ramp rate must
 *   move what the earlier steps leave within 129 600 s (1 msg/s x 129 600 s < 200 000 is refused);
 * - the DLQ and its destination (or every source queue) are the same queue type (FIFO vs standard),
 *   read from the ARNs (`.fifo` suffix) so a mismatch is refused before any call;
 * - the verification window: the source's visibility timeout x maxReceiveCount plus a margin, long
 *   enough for a consumer that still fails to send a sample back to the DLQ.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html
 */

import type { Envelope } from '#inventory/model.js';
import { payloadGoneReason } from '#inventory/payload-pointer.js';
import { formatDuration } from '#platform/clock-text.js';

/** StartMessageMoveTask's maximum rate, messages per second. */
export const MAX_MOVE_TASK_RATE = 500;
/** The longest a move task runs, seconds (36 hours). */
export const MAX_MOVE_TASK_SECONDS = 36 * 60 * 60;

/** One problem found in a plan; `message` is shown to the operator as is. */
export interface PlanProblem {
  code: 'RATE_ABOVE_MAX' | 'RATE_INVALID' | 'RAMP_TOO_SLOW' | 'QUEUE_TYPE_MISMATCH';
  message: string;
}

/**
 * Checks every ramp rate: an integer from 1 to 500 messages per second, each above the previous one.
 * Pure; call it before any API call.
 *
 * @param rates - the ramp, messages per second.
 * @returns the problems (empty when every rate is valid), e.g. `rampRates[2]: 600 exceeds max 500 msg/s`.
 */
export function checkRampRates(rates: readonly number[]): PlanProblem[] {
  const problems: PlanProblem[] = [];
  if (rates.length === 0)
    problems.push({ code: 'RATE_INVALID', message: 'rampRates: at least one rate is needed' });
  rates.forEach((rate, i) => {
    if (!Number.isInteger(rate) || rate < 1) {
      problems.push({
        code: 'RATE_INVALID',
        message: `rampRates[${i}]: ${rate} is not an integer >= 1 msg/s`,
      });
    } else if (rate > MAX_MOVE_TASK_RATE) {
      problems.push({
        code: 'RATE_ABOVE_MAX',
        message: `rampRates[${i}]: ${rate} exceeds max ${MAX_MOVE_TASK_RATE} msg/s`,
      });
    } else if (i > 0 && rate <= (rates[i - 1] as number)) {
      problems.push({
        code: 'RATE_INVALID',
        message: `rampRates[${i}]: ${rate} is not above the previous rate ${rates[i - 1]} (the ramp must ascend)`,
      });
    }
  });
  return problems;
}

/**
 * How many messages a ramp can move: every step but the last runs one dwell period (each in its
 * own move task), the last runs until the 36-hour task limit.
 *
 * @param rates - messages per second, one per ramp step.
 * @param dwellSeconds - seconds spent at each non-final step.
 * @returns messages.
 */
export function rampCapacity(rates: readonly number[], dwellSeconds: number): number {
  if (rates.length === 0) return 0;
  const early = rates.slice(0, -1).reduce((sum, rate) => sum + rate * dwellSeconds, 0);
  return early + (rates.at(-1) ?? 0) * MAX_MOVE_TASK_SECONDS;
}

/**
 * Refuses a plan whose rates cannot move the backlog before the last move task hits 36 hours.
 *
 * @param backlog - messages in the DLQ.
 * @returns a problem naming the capacity and the backlog, or undefined when the plan fits.
 */
export function checkRampCapacity(
  backlog: number,
  rates: readonly number[],
  dwellSeconds: number,
): PlanProblem | undefined {
  const capacity = rampCapacity(rates, dwellSeconds);
  if (backlog <= capacity) return undefined;
  const top = rates.at(-1) ?? 0;
  return {
    code: 'RAMP_TOO_SLOW',
    message: `a move task runs at most 36 h: at ${top} msg/s the ramp moves about ${capacity} messages, fewer than the ${backlog} in the DLQ; raise the last ramp rate to at least ${Math.ceil(backlog / MAX_MOVE_TASK_SECONDS)} msg/s`,
  };
}

/** One step of a {@link RampForecast}. */
export interface RampStepForecast {
  /** Messages per second. */
  rate: number;
  /** Messages this step moves. */
  messages: number;
  /** How long the step runs, seconds. */
  seconds: number;
}

/**
 * What a run would do, before anything moves (a dry run prints it; the approval shows the same
 * numbers): how many messages leave the DLQ first (parked or discarded), how many are sampled, how
 * many the ramp moves, each ramp step and the estimated wall time. Seconds; messages.
 */
export interface RampForecast {
  toPark: number;
  /** Where the do-not-redrive messages go: the parking queue, deleted (discardPoison), or none. */
  parkTo: 'parking-queue' | 'discard' | null;
  sample: number;
  toMove: number;
  /** The ramp steps that move something, in order. */
  steps: RampStepForecast[];
  verifyWindowSeconds: number;
  /**
   * Sample window + every step + one return window after the last move (the gate's drain),
   * seconds. About: each step-up also costs a cancel and a restart (about 1 s), and the health
   * gate may hold a step longer.
   */
  estimatedSeconds: number;
}

/**
 * Estimates the run of a plan the way the ramp runs it: every step but the last lasts one gate
 * period (the plan's dwell, at least one return window: the first check of a step waits for its
 * first messages to have had the time to come back), the last step moves the rest, and the run
 * ends one return window after the last move. A sample-only plan moves nothing in bulk.
 *
 * @param options.depth - messages in the DLQ; `toPark` of them leave it first.
 * @param options.verifyWindowSeconds - the return window (Preflight's verification window), seconds.
 */
export function forecastRun(options: {
  depth: number;
  toPark: number;
  parkTo: RampForecast['parkTo'];
  sampleSize: number;
  rampRates: readonly number[];
  dwellSeconds: number;
  verifyWindowSeconds: number;
  sampleOnly: boolean;
}): RampForecast {
  const window = Math.max(0, Math.ceil(options.verifyWindowSeconds));
  const afterPark = Math.max(0, options.depth - options.toPark);
  const sample = Math.min(options.sampleSize, afterPark);
  let left = options.sampleOnly ? 0 : afterPark - sample;
  const toMove = left;
  const stepSeconds = Math.max(options.dwellSeconds, window);
  const steps: RampStepForecast[] = [];
  options.rampRates.forEach((rate, i) => {
    if (left <= 0 || rate <= 0) return;
    const last = i === options.rampRates.length - 1;
    const messages = last ? left : Math.min(left, rate * stepSeconds);
    steps.push({
      rate,
      messages,
      seconds: last || messages < rate * stepSeconds ? Math.ceil(messages / rate) : stepSeconds,
    });
    left -= messages;
  });
  const rampSeconds = steps.reduce((sum, step) => sum + step.seconds, 0);
  return {
    toPark: options.toPark,
    parkTo: options.toPark > 0 ? options.parkTo : null,
    sample,
    toMove,
    steps,
    verifyWindowSeconds: window,
    estimatedSeconds: (sample > 0 ? window : 0) + rampSeconds + (steps.length > 0 ? window : 0),
  };
}

/**
 * The forecast in one line, e.g. `park 12, sample 5 (then 32 s verification window), move 163 at
 * 5 msg/s for 1 min (160), then 50 msg/s for 1 s (3); about 2 min in all`.
 */
export function forecastText(forecast: RampForecast): string {
  const parts: string[] = [];
  if (forecast.toPark > 0)
    parts.push(`${forecast.parkTo === 'discard' ? 'discard' : 'park'} ${forecast.toPark}`);
  parts.push(
    forecast.sample > 0
      ? `sample ${forecast.sample} (then ${forecast.verifyWindowSeconds} s verification window)`
      : 'sample none',
  );
  parts.push(
    forecast.steps.length === 0
      ? 'move nothing in bulk'
      : `move ${forecast.toMove} at ${forecast.steps.map((s) => `${s.rate} msg/s for ${formatDuration(s.seconds * 1000)} (${s.messages})`).join(', then ')}`,
  );
  return `${parts.join(', ')}; about ${formatDuration(forecast.estimatedSeconds * 1000)} in all`;
}

/** True when an SQS ARN or URL names a FIFO queue (`.fifo` suffix). */
export function isFifoName(arnOrUrl: string): boolean {
  return arnOrUrl.replace(/\/+$/, '').endsWith('.fifo');
}

/**
 * Refuses mixing queue types: a FIFO DLQ only redrives into FIFO queues and a standard one only into
 * standard queues. FIFO -> FIFO is supported (since November 2023; older SDK doc comments that say
 * "standard only" are out of date).
 *
 * @param dlqArn - the DLQ.
 * @param targets - the destination ARN, or every source queue ARN when no destination is given.
 */
export function checkQueueTypes(dlqArn: string, targets: readonly string[]): PlanProblem | undefined {
  const fifo = isFifoName(dlqArn);
  const odd = targets.filter((t) => isFifoName(t) !== fifo);
  if (odd.length === 0) return undefined;
  return {
    code: 'QUEUE_TYPE_MISMATCH',
    message: `queue types differ (FIFO vs standard): ${dlqArn} is ${fifo ? 'FIFO' : 'standard'}, ${odd.join(', ')} ${odd.length === 1 ? 'is' : 'are'} ${fifo ? 'standard' : 'FIFO'}`,
  };
}

/**
 * The return window of a redriven message, which is also the verification window: long enough for
 * a consumer that still fails to first see the message (a delay queue hides every new message,
 * a redriven one too, for its DelaySeconds), receive it `maxReceiveCount` times, and for
 * SQS to move it back to the DLQ: DelaySeconds + VisibilityTimeout x maxReceiveCount + margin.
 *
 * @param sources - each destination's VisibilityTimeout and DelaySeconds (seconds, DelaySeconds
 *   0 when absent) and maxReceiveCount.
 * @param marginSeconds - added on top (consumer start-up, polling delay).
 * @returns seconds (the longest over the sources).
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-delay-queues.html
 */
export function verifyWindowSeconds(
  sources: ReadonlyArray<{
    visibilityTimeoutSeconds: number;
    maxReceiveCount: number;
    delaySeconds?: number;
  }>,
  marginSeconds: number,
): number {
  const longest = sources.reduce(
    (max, s) =>
      Math.max(max, (s.delaySeconds ?? 0) + s.visibilityTimeoutSeconds * Math.max(1, s.maxReceiveCount)),
    0,
  );
  return longest + marginSeconds;
}

/**
 * Why an envelope must stay out of the bulk move, or undefined when it may be redriven.
 * @param plan - uses `maxRedrives` and `destinationArn`.
 */
export function parkReason(
  envelope: Pick<
    Envelope,
    'classification' | 'redriveCount' | 'sourceArn' | 'payload' | 'payloadGoneAt' | 'origin'
  >,
  plan: { maxRedrives: number; destinationArn: string | null },
): string | undefined {
  if (envelope.classification === 'poison' || envelope.classification === 'permanent')
    return `classified ${envelope.classification}: do not redrive`;
  if (envelope.redriveCount >= plan.maxRedrives)
    return `redriven ${envelope.redriveCount} times (maxRedrives ${plan.maxRedrives})`;
  // An SNS, EventBridge or Lambda origin is a target of its own: the recording mover sends it back.
  const otherOrigin = envelope.origin !== undefined && envelope.origin.kind !== 'sqs';
  if (envelope.sourceArn === 'unknown' && !plan.destinationArn && !otherOrigin)
    return 'no DeadLetterQueueSourceArn (sent straight to the DLQ): a move task cannot return it';
  if (envelope.payload && envelope.payloadGoneAt) return payloadGoneReason(envelope.payload);
  return undefined;
}
