/**
 * The local stack of one workflow test file (test/workflow): started before the file's tests and
 * stopped after them, with the shared SQS client the harness drives it through (`sqsClient()`,
 * pointed at the stack by `startLocalStack`). What nine files each wrote out as `let stack; let
 * sqs; beforeAll(...); afterAll(...)`.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll } from 'vitest';
import { resetClients, sqsClient } from '#platform/clients.js';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../local/stack.js';

/** The running stack of a test file; read it inside tests and hooks (it starts in `beforeAll`). */
export interface WorkflowStack {
  readonly stack: LocalStack;
  readonly sqs: SQSClient;
}

/**
 * Registers the `beforeAll` that starts the stack and the `afterAll` that stops it.
 *
 * @param options - `startLocalStack` options, and `env`: variables the pipeline reads, set
 *   before the stack starts and restored after it stops (`resetClients` both times, so the
 *   configuration is read again).
 * @throws Error when `stack` or `sqs` is read before the stack started.
 */
export function useWorkflowStack(
  options: LocalStackOptions & { env?: Readonly<Record<string, string>> } = {},
): WorkflowStack {
  const { env = {}, ...stackOptions } = options;
  const saved = new Map<string, string | undefined>();
  let running: { stack: LocalStack; sqs: SQSClient } | undefined;
  beforeAll(async () => {
    for (const [name, value] of Object.entries(env)) {
      saved.set(name, process.env[name]);
      process.env[name] = value;
    }
    if (saved.size > 0) resetClients();
    const stack = await startLocalStack(stackOptions);
    running = { stack, sqs: sqsClient() };
  });
  afterAll(async () => {
    await running?.stack.stop();
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    if (saved.size > 0) resetClients();
  });
  const started = () => {
    if (!running)
      throw new Error('useWorkflowStack: the local stack has not started (read it inside a test)');
    return running;
  };
  return {
    get stack() {
      return started().stack;
    },
    get sqs() {
      return started().sqs;
    },
  };
}
