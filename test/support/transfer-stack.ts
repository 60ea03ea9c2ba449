/**
 * Test hooks for suites that run Park / SampleRedrive on the local stack: one local stack per
 * file, a short transfer visibility timeout (a crashed receive hides a message for 2 s instead of
 * 30 s, so retry tests are quick), and no fault hook leaking from one test into the next.
 * Call it inside `describe`; it returns the running stack (for its stand-ins).
 */
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { resetClients, sqsClient } from '#platform/clients.js';
import { setTransferFaultHook } from '#transfer/message-transfer.js';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../local/stack.js';

/** @param options - of the local stack. */
export function useTransferStack(options: LocalStackOptions = {}): () => LocalStack {
  let stack: LocalStack | undefined;
  beforeAll(async () => {
    stack = await startLocalStack(options);
    process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS = '2';
    resetClients();
  });
  afterEach(() => setTransferFaultHook(undefined));
  afterAll(async () => {
    delete process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS;
    resetClients();
    await stack?.stop();
  });
  return () => {
    if (!stack) throw new Error('the local stack is not started yet (call inside a test)');
    return stack;
  };
}

/** Someone else (a console poll, a crashed attempt) receives every visible message and holds it. */
export async function holdAll(url: string, seconds: number): Promise<number> {
  let held = 0;
  for (let empty = 0; empty < 2; ) {
    const out = await sqsClient().send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: seconds }),
    );
    const n = out.Messages?.length ?? 0;
    if (n === 0) empty += 1;
    held += n;
  }
  return held;
}
