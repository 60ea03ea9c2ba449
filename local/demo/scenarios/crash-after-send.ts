/**
 * `crash-after-send`: SampleRedrive's runtime dies right after SendMessage of its first sample
 * message, before the ledger records SENT (an injected crash: local/fault-injection.ts). Step
 * Functions retries the step (`Lambda.Unknown`); the retry finds the entry IN_PROGRESS and sends
 * again, because it cannot know whether the first send reached SQS. The consumer receives that
 * message twice (its idempotency key lets it skip the second), and the report must say so: one
 * possible duplicate send, naming the very key the consumer saw twice. Nothing is missing.
 */
import { FaultInjector } from '../../fault-injection.js';
import { conservationProblems, type RunReport } from '../report.js';
import type { Scenario, ScenarioContext } from './types.js';

function duplicateKeys(ctx: ScenarioContext): string[] {
  const copies = new Map<string, Set<string>>();
  for (const d of ctx.incident.consumer.deliveries) {
    if (!d.pipelineKey) continue;
    const ids = copies.get(d.pipelineKey) ?? new Set<string>();
    ids.add(d.messageId);
    copies.set(d.pipelineKey, ids);
  }
  return [...copies].filter(([, ids]) => ids.size > 1).map(([key]) => key);
}

function checkDuplicate(report: RunReport, ctx: ScenarioContext): string[] {
  const faults = ctx.notes.faults as FaultInjector | undefined;
  const problems = conservationProblems(report);
  if (faults?.crashes.length !== 1)
    problems.push(`${faults?.crashes.length ?? 0} crash(es) injected, meant 1`);
  const seenTwice = duplicateKeys(ctx).sort();
  const reported = report.possibleDuplicates.map((d) => d.idempotencyKey).sort();
  if (report.possibleDuplicateSends !== 1)
    problems.push(`possibleDuplicateSends ${report.possibleDuplicateSends}, expected 1`);
  if (reported.join() !== seenTwice.join())
    problems.push(
      `the report names ${reported.join(', ') || 'nothing'}, the consumer received ${seenTwice.join(', ') || 'nothing'} twice`,
    );
  if (report.consumer.processedTwice > 0)
    problems.push(`${report.consumer.processedTwice} key(s) processed twice`);
  return problems;
}

export const crashAfterSend: Scenario = {
  name: 'crash-after-send',
  summary:
    'SampleRedrive dies right after SendMessage, before the ledger says SENT: the retry sends again and the report names that duplicate',
  expected: {
    outcome: 'Done',
    text: 'possibleDuplicateSends 1, naming the key the consumer received twice; nothing missing',
  },
  incident: (messages) => ({ name: 'crash-after-send', messages: messages ?? 60 }),
  runner(ctx) {
    const faults = new FaultInjector();
    faults.install();
    faults.arm({ functionFolder: 'sample-redrive', command: 'SendMessageCommand', mode: 'retry' });
    ctx.notes.faults = faults;
    return { faults };
  },
  onTaskResult(ctx, state) {
    if (state === 'SampleRedrive') {
      const crash = (ctx.notes.faults as FaultInjector).crashes[0];
      if (crash)
        ctx.say(
          `SampleRedrive crashed right after ${crash.command} (${crash.site}); Step Functions retried it.`,
        );
    }
  },
  check: checkDuplicate,
};
