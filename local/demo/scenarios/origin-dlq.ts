/**
 * `sns-dlq`, `eventbridge-dlq` and `lambda-dlq`: a DLQ that no SQS redrive policy feeds. The
 * orders reach a Lambda function through an SNS topic subscription whose redrive policy names the
 * DLQ (`sns-dlq`), as the target of an EventBridge rule whose target DLQ it is
 * (`eventbridge-dlq`), or as asynchronous invocations of a function whose DLQ it is
 * (`lambda-dlq`); the function fails on poison and during its dependency's outage, and the service
 * dead-letters the message with its reason (SNS and Lambda: `ErrorCode` / `ErrorMessage`;
 * EventBridge: the event with `RULE_ARN`, `TARGET_ARN`, `ERROR_CODE`, `ERROR_MESSAGE`).
 * StartMessageMoveTask cannot send these back (it moves only to an SQS source queue), so the run
 * takes the recording mover: triage reads each message's real failure reason, the poison is
 * parked, the sample is published to the topic (put on the bus, or invoked asynchronously) and
 * verified, the rest ramps, Reconcile balances. Each message reaches the function once more; SNS
 * copies carry their idempotency key as an attribute, and each event put back on the bus derives
 * the key of its envelope (its content, time included: only the event id is new).
 *
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html
 */
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { deriveIdempotencyKey } from '#inventory/idempotency-key.js';
import { conservationProblems, exposureProblems } from '../report.js';
import type { OriginKind } from '../scenario.js';
import type { Scenario, ScenarioContext } from './types.js';

interface OriginNotes {
  path?: string | undefined;
  /** Envelopes' failure classes seen by triage: each of the function's two, none `poison` by default. */
  failureClasses?: string[];
  /** EventBridge: events on the bus before triage (the orders' own puts). */
  putsBefore?: number;
  /** EventBridge: the events put on the bus during the run, by idempotency key derived from each. */
  putsByKey?: Record<string, number>;
  /** EventBridge: the keys of the envelopes redriven. */
  redrivenKeys?: string[];
  /** EventBridge: envelopes without the rule and target from `RULE_ARN` / `TARGET_ARN`. */
  withoutRule?: number;
}

const VIA: Record<OriginKind, string> = {
  sns: 'an SNS subscription',
  eventbridge: "an EventBridge rule's target",
  lambda: 'asynchronous invocations',
};
const TO: Record<OriginKind, string> = { sns: 'topic', eventbridge: 'event bus', lambda: 'function' };

function originScenario(kind: OriginKind): Scenario {
  return {
    name: `${kind}-dlq`,
    summary: `the DLQ of ${VIA[kind]}: triaged with its real failure reasons, redriven to the ${TO[kind]} by the recording mover`,
    expected: {
      outcome: 'Done',
      text: `every message redriven to its ${TO[kind]} or parked, processed once${kind === 'lambda' ? '' : ' with its idempotency key'}, nothing missing`,
    },
    incident: (messages) => ({
      name: `${kind}-orders`,
      origin: kind,
      messages: messages ?? 60,
      poisonEvery: 10,
      registration: { sampleSize: 3, rampRates: [20, 200], dwellSeconds: 1 },
    }),
    beforeTriage: async (ctx) => {
      (ctx.notes as OriginNotes).putsBefore = ctx.standins?.eventbridge.events.length ?? 0;
    },
    onTaskResult: (ctx, state, result) => {
      const notes = ctx.notes as OriginNotes;
      if (state === 'Preflight') notes.path = (result as { path?: string }).path;
    },
    afterRun: async (ctx) => {
      const notes = ctx.notes as OriginNotes;
      const classes = new Set<string>();
      const redriven: string[] = [];
      let withoutRule = 0;
      for await (const e of createEnvelopeStore().listEnvelopes(ctx.incident.queues.dlqArn)) {
        if (!e.lateArrival) classes.add(`${e.failure.errorClass ?? '<none>'}:${e.classification}`);
        if (e.state === 'REDRIVEN') redriven.push(e.idempotencyKey);
        if (!e.origin?.ruleArn || !e.origin.targetArn) withoutRule += 1;
      }
      notes.failureClasses = [...classes].sort();
      if (kind !== 'eventbridge') return;
      notes.redrivenKeys = redriven.sort();
      notes.withoutRule = withoutRule;
      // What the mover put on the bus: each event as the rule's target got it, keyed as a consumer
      // (or a DLQ message of it) derives the key, by its content, not its new event id.
      const bus = ctx.incident.origin?.arn;
      const byKey: Record<string, number> = {};
      for (const put of ctx.standins?.eventbridge.events.slice(notes.putsBefore ?? 0) ?? []) {
        if (put.eventBusArn !== bus) continue;
        const { key } = deriveIdempotencyKey({
          sourceArn: 'unknown',
          body: JSON.stringify(put.event),
          messageAttributes: {},
        });
        byKey[key] = (byKey[key] ?? 0) + 1;
      }
      notes.putsByKey = byKey;
    },
    check: (report, ctx) => checkOrigin(kind, report, ctx),
  };
}

function checkOrigin(
  kind: OriginKind,
  report: Parameters<NonNullable<Scenario['check']>>[0],
  ctx: ScenarioContext,
): string[] {
  const notes = ctx.notes as OriginNotes;
  const { consumer, produced } = ctx.incident;
  const poison = produced.poisonIds.length;
  const want = (ok: boolean, problem: string) => (ok ? [] : [problem]);
  const redrivenKeys = consumer.deliveries.filter((d) => d.redriveId !== null);
  return [
    ...conservationProblems(report),
    ...exposureProblems(report),
    ...want(notes.path === 'mover', `Preflight chose the ${notes.path} path, expected the recording mover`),
    ...want(
      (notes.failureClasses ?? []).every((c) => !c.endsWith(':poison')) &&
        (notes.failureClasses ?? []).length >= 2,
      `triage's failure reasons: ${(notes.failureClasses ?? []).join(', ')} (expected the function's own, none poison by default)`,
    ),
    ...want(report.parked === poison, `${report.parked} parked, expected the ${poison} poison`),
    ...want(
      report.redriven === report.inventoried - poison,
      `${report.redriven} redriven of ${report.inventoried - poison} that are not poison`,
    ),
    ...want(report.consumer.processedTwice === 0, `${report.consumer.processedTwice} processed twice`),
    ...want(
      consumer.stats.processed === produced.orderIds.length - poison,
      `the function processed ${consumer.stats.processed} orders, expected ${produced.orderIds.length - poison} (every order but the poison, once)`,
    ),
    ...(kind === 'sns'
      ? want(
          redrivenKeys.length > 0 && redrivenKeys.every((d) => d.pipelineKey !== null),
          `${redrivenKeys.filter((d) => d.pipelineKey === null).length} of ${redrivenKeys.length} redriven SNS deliveries without an idempotency-key attribute`,
        )
      : []),
    ...(kind === 'eventbridge' ? eventProblems(notes) : []),
  ];
}

/** Each redriven envelope's event put back on its bus exactly once, under the envelope's key; the rule and target read. */
function eventProblems(notes: OriginNotes): string[] {
  const byKey = notes.putsByKey ?? {};
  const redriven = notes.redrivenKeys ?? [];
  const problems: string[] = [];
  const twice = Object.entries(byKey).filter(([, n]) => n > 1);
  if (twice.length > 0) problems.push(`${twice.length} events put on the bus more than once`);
  const missing = redriven.filter((k) => byKey[k] === undefined);
  if (missing.length > 0)
    problems.push(
      `${missing.length} of ${redriven.length} redriven envelopes have no event on the bus with their key`,
    );
  const extra = Object.keys(byKey).filter((k) => !redriven.includes(k));
  if (extra.length > 0) problems.push(`${extra.length} events on the bus match no redriven envelope's key`);
  if ((notes.withoutRule ?? 0) > 0)
    problems.push(`${notes.withoutRule} envelopes without the rule and target of RULE_ARN / TARGET_ARN`);
  return problems;
}

export const snsDlq = originScenario('sns');
export const eventBridgeDlq = originScenario('eventbridge');
export const lambdaDlq = originScenario('lambda');
