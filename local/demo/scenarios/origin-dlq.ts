/**
 * `sns-dlq` and `lambda-dlq`: a DLQ that no SQS redrive policy feeds. The orders reach a Lambda
 * function through an SNS topic subscription whose redrive policy names the DLQ (`sns-dlq`), or as
 * asynchronous invocations of a function whose DLQ it is (`lambda-dlq`); the function fails on
 * poison and during its dependency's outage, and the service dead-letters the message with its
 * `ErrorCode` / `ErrorMessage`. StartMessageMoveTask cannot send these back (it moves only to an
 * SQS source queue), so the run takes the recording mover: triage reads each message's real
 * failure reason, the poison is parked, the sample is published to the topic (or invoked
 * asynchronously) and verified, the rest ramps, Reconcile balances. Each message reaches the
 * function once more; SNS copies carry their idempotency key.
 */
import { createEnvelopeStore } from '#inventory/envelope-store.js';
import { conservationProblems, exposureProblems } from '../report.js';
import type { Scenario, ScenarioContext } from './types.js';

interface OriginNotes {
  path?: string | undefined;
  /** Envelopes' failure classes seen by triage: each of the function's two, none `poison` by default. */
  failureClasses?: string[];
}

function originScenario(kind: 'sns' | 'lambda'): Scenario {
  const via = kind === 'sns' ? 'an SNS subscription' : 'asynchronous invocations';
  return {
    name: `${kind}-dlq`,
    summary: `the DLQ of ${via}: triaged with its real failure reasons, redriven to the ${kind === 'sns' ? 'topic' : 'function'} by the recording mover`,
    expected: {
      outcome: 'Done',
      text: `every message redriven to its ${kind === 'sns' ? 'topic' : 'function'} or parked, processed once${kind === 'sns' ? ' with its idempotency key' : ''}, nothing missing`,
    },
    incident: (messages) => ({
      name: `${kind}-orders`,
      origin: kind,
      messages: messages ?? 60,
      poisonEvery: 10,
      registration: { sampleSize: 3, rampRates: [20, 200], dwellSeconds: 1 },
    }),
    onTaskResult: (ctx, state, result) => {
      const notes = ctx.notes as OriginNotes;
      if (state === 'Preflight') notes.path = (result as { path?: string }).path;
    },
    afterRun: async (ctx) => {
      const classes = new Set<string>();
      for await (const e of createEnvelopeStore().listEnvelopes(ctx.incident.queues.dlqArn))
        if (!e.lateArrival) classes.add(`${e.failure.errorClass ?? '<none>'}:${e.classification}`);
      (ctx.notes as OriginNotes).failureClasses = [...classes].sort();
    },
    check: (report, ctx) => checkOrigin(kind, report, ctx),
  };
}

function checkOrigin(
  kind: 'sns' | 'lambda',
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
  ];
}

export const snsDlq = originScenario('sns');
export const lambdaDlq = originScenario('lambda');
