import type { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { createParkSendBatch } from '../../functions/park/park-transfer.js';

/** An SQS client that answers every command with `answer` and keeps what it was sent. */
function clientAnswering(answer: unknown) {
  const sent: Array<{ input: { Entries: Array<{ Id: string; MessageBody: string }> } }> = [];
  const client = {
    send: async (command: (typeof sent)[number]) => {
      sent.push(command);
      return answer;
    },
  } as unknown as SQSClient;
  return { client, sent };
}

describe('SendMessageBatch of the parking queue', () => {
  it('maps each entry to its outcome by Id: sent with its MessageId, failed with code and sender fault, unreported as not known to be sent', async () => {
    const { client, sent } = clientAnswering({
      Successful: [{ Id: '2', MessageId: 'm-2' }],
      Failed: [{ Id: '0', Code: 'InvalidMessageContents', Message: 'bad', SenderFault: true }],
    });
    const send = createParkSendBatch({ client });

    const outcomes = await send('http://sqs/parking', [
      { body: 'a', attributes: {} },
      { body: 'b', attributes: {} },
      { body: 'c', attributes: {} },
    ]);

    expect(sent[0]?.input.Entries.map((e) => [e.Id, e.MessageBody])).toEqual([
      ['0', 'a'],
      ['1', 'b'],
      ['2', 'c'],
    ]);
    expect(outcomes).toEqual([
      { ok: false, code: 'InvalidMessageContents', message: 'bad', senderFault: true },
      { ok: false, code: 'NotReported', message: expect.any(String), senderFault: false },
      { ok: true, sentId: 'm-2' },
    ]);
  });

  it('turns a throttled call into Redrive.Transient naming the action', async () => {
    const throttled = Object.assign(new Error('slow down'), {
      name: 'ThrottlingException',
      $metadata: { httpStatusCode: 400 },
      $retryable: { throttling: true },
    });
    const client = {
      send: async () => {
        throw throttled;
      },
    } as unknown as SQSClient;

    await expect(
      createParkSendBatch({ client })('http://sqs/parking', [{ body: 'a', attributes: {} }]),
    ).rejects.toMatchObject({
      name: 'Redrive.Transient',
      message: expect.stringContaining('sqs:SendMessageBatch'),
    });
  });
});
