import { readFileSync } from 'node:fs';
import { type ListMessageMoveTasksResult, SQSClient, SQSServiceException } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { activeTask, createMoveTasks, toMoveTask } from '#transfer/move-tasks.js';

const load = (name: string) =>
  JSON.parse(
    readFileSync(new URL(`../../events/sqs/${name}.json`, import.meta.url), 'utf8'),
  ) as ListMessageMoveTasksResult;
const DLQ = 'arn:aws:sqs:us-east-1:111122223333:orders-dlq';

function sqsError(name: string, message: string): SQSServiceException {
  return new SQSServiceException({ name, $fault: 'client', $metadata: { httpStatusCode: 400 }, message });
}

/** A client mock (this rare-error path cannot be produced by the local SQS server). */
function mockClient(responses: Record<string, (input: Record<string, unknown>) => unknown>) {
  const calls: string[] = [];
  const client = new SQSClient({ region: 'us-east-1' });
  client.send = (async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
    const name = command.constructor.name.replace(/Command$/, '');
    calls.push(name);
    const respond = responses[name];
    if (!respond) throw new Error(`unexpected ${name}`);
    return respond(command.input);
  }) as never;
  return { client, calls };
}

describe('move task adapters', () => {
  it('C06 maps a FAILED task with its FailureReason and the number moved', async () => {
    const { client } = mockClient({ ListMessageMoveTasks: () => load('list-message-move-tasks-failed') });
    const [task] = await createMoveTasks({ client }).list(DLQ);
    expect(task).toMatchObject({
      status: 'FAILED',
      failureReason: 'AWS.SimpleQueueService.NonExistentQueue',
      moved: 3,
      toMove: 10,
      taskHandle: null,
    });
  });

  it('C06 treats RUNNING and CANCELLING as active, and COMPLETED, CANCELLED, FAILED as not', () => {
    const base = load('list-message-move-tasks-running').Results?.[0] ?? {};
    const of = (Status: string) => toMoveTask({ ...base, Status });
    expect(activeTask([of('CANCELLING')])?.status).toBe('CANCELLING');
    expect(activeTask([of('RUNNING')])?.taskHandle).toBe('EXAMPLE-HANDLE-1');
    expect(activeTask([of('COMPLETED'), of('CANCELLED'), of('FAILED')])).toBeUndefined();
  });

  it('C06 maps StartMessageMoveTask InvalidParameterValue during an active task to the same refusal, by code', async () => {
    const { client, calls } = mockClient({
      StartMessageMoveTask: () => {
        throw sqsError(
          'InvalidParameterValue',
          '(AWS text says a task is already running for this source ARN)',
        );
      },
      ListMessageMoveTasks: () => load('list-message-move-tasks-running'),
    });
    const result = await createMoveTasks({ client }).start({ sourceArn: DLQ, rate: 5 });
    expect(result).toEqual({
      ok: false,
      code: 'TASK_ACTIVE',
      refusal: 'redrive refused: task EXAMPLE-HANDLE-1 already active',
    });
    expect(calls).toEqual(['StartMessageMoveTask', 'ListMessageMoveTasks']);
  });

  it('reports InvalidParameterValue without an active task as a rejection, and ResourceNotFound as not found', async () => {
    const rejected = mockClient({
      StartMessageMoveTask: () => {
        throw sqsError('InvalidParameterValue', 'Source queue must be configured as a Dead Letter Queue.');
      },
      ListMessageMoveTasks: () => ({}),
    });
    expect(
      await createMoveTasks({ client: rejected.client }).start({ sourceArn: DLQ, rate: 5 }),
    ).toMatchObject({
      ok: false,
      code: 'REJECTED',
    });
    const missing = mockClient({
      StartMessageMoveTask: () => {
        throw sqsError(
          'ResourceNotFoundException',
          'The resource that you specified for the DestinationArn parameter does not exist.',
        );
      },
    });
    expect(
      await createMoveTasks({ client: missing.client }).start({
        sourceArn: DLQ,
        destinationArn: `${DLQ}-x`,
        rate: 5,
      }),
    ).toMatchObject({ ok: false, code: 'NOT_FOUND' });
  });

  it('C06 refuses a rate above 500 msg/s without calling SQS', async () => {
    const { client, calls } = mockClient({});
    const result = await createMoveTasks({ client }).start({ sourceArn: DLQ, rate: 600 });
    expect(result).toMatchObject({ ok: false, code: 'RATE_ABOVE_MAX' });
    expect(calls).toEqual([]);
  });

  it('omits DestinationArn unless one is given', async () => {
    const inputs: Record<string, unknown>[] = [];
    const { client } = mockClient({
      StartMessageMoveTask: (input) => {
        inputs.push(input);
        return { TaskHandle: 'h' };
      },
    });
    await createMoveTasks({ client }).start({ sourceArn: DLQ, destinationArn: null, rate: 5 });
    expect(inputs[0]).toEqual({ SourceArn: DLQ, MaxNumberOfMessagesPerSecond: 5 });
  });

  it('reports a cancel of a task that is no longer RUNNING as not cancelled instead of failing', async () => {
    const { client } = mockClient({
      CancelMessageMoveTask: () => {
        throw sqsError('InvalidParameterValue', 'Only active tasks can be cancelled.');
      },
    });
    expect(await createMoveTasks({ client }).cancel('h')).toEqual({ cancelled: false, moved: null });
  });
});
