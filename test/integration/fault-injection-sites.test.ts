import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIncidentStore } from '#incident/incident-store.js';
import { sqsClient } from '#platform/clients.js';
import { createSqsQueues } from '#platform/sqs-queues.js';
import { FaultInjector } from '../../local/fault-injection.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';

// The crash matrix runs several cells at once in one process: each installs its own injector on the
// shared clients, and every injector's middleware is one more stack frame above the project's call.
// A call site must not depend on how many cells run beside it (a site cut off the stack trace was
// "never injected" in a --representative run while the same cell passed in full runs).
describe('fault-injection call sites with concurrent injectors (local stack)', () => {
  let stack: LocalStack;
  const others: FaultInjector[] = [];
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    for (const injector of others) injector.uninstall();
    await stack?.stop();
  });

  async function sitesWith(injector: FaultInjector, queueUrl: string): Promise<string[]> {
    injector.install();
    try {
      await injector.invoke('park', async () => {
        await createSqsQueues().describe(queueUrl);
        await createIncidentStore().claimInventory(
          {
            dlqArn: `arn:aws:sqs:${stack.region}:${stack.accountId}:fi-sites`,
            owner: 'fi',
            leaseExpiresAt: 1,
          },
          0,
        );
      });
    } finally {
      injector.uninstall();
    }
    return injector.calls.map((c) => c.site);
  }

  it('names the same call sites (SQS client and document client) with 1 and with 12 injectors installed, and a crash planned at one of them is injected', async () => {
    const { QueueUrl } = await sqsClient().send(new CreateQueueCommand({ QueueName: 'fi-sites' }));
    const alone = await sitesWith(new FaultInjector(), QueueUrl as string);
    expect(alone).toEqual([
      expect.stringMatching(/^functions\/shared\/platform\/sqs-queues\.ts:\d+$/),
      expect.stringMatching(/^functions\/shared\/incident\/incident-store\.ts:\d+$/),
    ]);
    for (let i = 0; i < 11; i++) {
      const other = new FaultInjector();
      other.install();
      others.push(other);
    }
    const crowded = await sitesWith(new FaultInjector(), QueueUrl as string);
    expect(crowded).toEqual(alone);

    const armed = new FaultInjector();
    armed.arm({ functionFolder: 'park', site: alone[1] as string, mode: 'retry' });
    await expect(sitesWith(armed, QueueUrl as string)).rejects.toMatchObject({ name: 'Lambda.Unknown' });
    expect(armed.crashes.map((c) => c.site)).toEqual([alone[1]]);
  });
});
