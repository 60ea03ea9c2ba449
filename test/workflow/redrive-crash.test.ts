import type { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetClients, sqsClient } from '#platform/clients.js';
import { setTransferFaultHook } from '#transfer/message-transfer.js';
import { loadHandler, type TaskBinding } from '../../local/runner.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { runIncident } from './harness.js';

describe('sample redrive crash recovery on the local stack (real ASL, real handlers)', () => {
  let stack: LocalStack;
  let sqs: SQSClient;
  const previousVisibility = process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS;
  beforeAll(async () => {
    stack = await startLocalStack();
    sqs = sqsClient();
    // The sample function's receive visibility timeout (its Lambda configuration): how long the
    // crashed attempt keeps its message hidden before the retry can recognise it. 30 s on AWS.
    process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS = '3';
    resetClients();
  });
  afterAll(async () => {
    setTransferFaultHook(undefined);
    if (previousVisibility === undefined) delete process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS;
    else process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS = previousVisibility;
    await stack?.stop();
  });

  it('a crash between send and delete in the sample: no second send, the duplicate left in the DLQ is recognised by its key', async () => {
    let crashedKey: string | undefined;
    let crashes = 0;
    // The real sample-redrive handler, with its transfer crashing once right after the send
    // (before the delete): Lambda reports a dead runtime as Lambda.Unknown, which the ASL retries.
    const sampleWithCrash: TaskBinding = async (payload, invocation) => {
      let crashedNow = false;
      setTransferFaultHook((step, key) => {
        if (step === 'after-send' && crashes === 0) {
          crashes += 1;
          crashedKey = key;
          crashedNow = true;
          throw new Error('injected crash between send and delete');
        }
      });
      try {
        return await (await loadHandler('sample-redrive'))(payload, invocation.context);
      } catch (error) {
        if (!crashedNow) throw error;
        const crash = new Error('RequestId: local Error: Runtime exited with error: signal: killed');
        crash.name = 'Lambda.Unknown';
        throw crash;
      } finally {
        setTransferFaultHook(undefined);
      }
    };
    const run = await runIncident(sqs, {
      name: 'crash',
      messages: 30,
      runner: { bindings: { SampleRedrive: sampleWithCrash } },
    });
    expect(crashes).toBe(1);
    expect(crashedKey).toBeDefined();
    expect(run.result.invocations.SampleRedrive).toBe(2);
    expect(
      run.result.events.some((e) => e.type === 'StateRetried' && e.state?.name === 'SampleRedrive'),
    ).toBe(true);
    // The pipeline sent the crashed key once: one copy carries its idempotency-key attribute.
    const pipelineCopies = new Set(
      run.incident.consumer.deliveries.filter((d) => d.pipelineKey === crashedKey).map((d) => d.messageId),
    );
    expect(pipelineCopies.size).toBe(1);
    expect(run.incident.consumer.stats.processedTwice).toBe(0);
    expect(run.result.status).toBe('SUCCEEDED');
    expect(run.reconcile?.missing).toBe(0);
    expect(run.result.taskResults.SampleRedrive).toMatchObject({ alreadySent: 1, sent: 4 });
    expect((run.result.taskResults.SampleRedrive as { keys: string[] }).keys).toContain(crashedKey);
    expect(run.reconcile?.duplicateSendsPrevented).toBeGreaterThanOrEqual(1);
    if (run.reconcile)
      expect(
        run.reconcile.redriven + run.reconcile.parked + run.reconcile.discarded + run.reconcile.inDlq,
      ).toBe(run.reconcile.inventoried);
  });
});
