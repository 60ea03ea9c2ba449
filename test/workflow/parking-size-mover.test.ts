import { SendMessageCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { runScenario } from '../../local/demo/run-scenario.js';
import { scenarioNamed } from '../../local/demo/scenarios/index.js';
import type { Scenario } from '../../local/demo/scenarios/types.js';
import { useWorkflowStack } from '../support/workflow-stack.js';

// N01 (breaker 2): the parking queue's MaximumMessageSize checked before the approval on
// every path that parks, not only the move task's.
describe('N01 parking-queue size on the recording mover path (real triage, real ASL, local stack)', {
  timeout: 300_000,
}, () => {
  const local = useWorkflowStack();

  it('N01 an SNS DLQ (recording mover, poison parked first) with a message to park larger than the parking queue takes is refused by Preflight, naming it; nothing moves', async () => {
    const sns = scenarioNamed('sns-dlq') as Scenario;
    const scenario: Scenario = {
      ...sns,
      name: 'sns-dlq-parking-small',
      async beforeTriage(ctx) {
        await sns.beforeTriage?.(ctx);
        await ctx.sqs.send(
          new SetQueueAttributesCommand({
            QueueUrl: ctx.incident.queues.parkingUrl,
            Attributes: { MaximumMessageSize: '1024' },
          }),
        );
        // A permanent failure of 1.5 KB (a do-not-redrive message), straight into the DLQ.
        await ctx.sqs.send(
          new SendMessageCommand({
            QueueUrl: ctx.incident.queues.dlqUrl,
            MessageBody: JSON.stringify({ orderId: 'oversized-order', notes: 'n'.repeat(1500) }),
            MessageAttributes: { 'error-class': { DataType: 'String', StringValue: 'SyntaxError' } },
          }),
        );
      },
    };
    const report = await runScenario(scenario, {
      retryIntervalMs: 100,
      messages: 40,
      standins: local.stack.standins,
    });
    expect(report.reason ?? '').toMatch(/larger than the parking queue's MaximumMessageSize \(1024 bytes\)/);
    expect(report.outcome).toBe('RedriveRefused');
    expect(report.parked).toBe(0);
    expect(report.redriven).toBe(0);
  });
});
