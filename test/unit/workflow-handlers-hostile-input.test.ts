import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoClient, sqsClient } from '#platform/clients.js';
import type { InvalidInputError } from '#platform/errors.js';
import { handler as moveTask } from '../../functions/move-task/handler.js';
import { handler as notify } from '../../functions/notify/handler.js';
import { handler as park } from '../../functions/park/handler.js';
import { handler as preflight } from '../../functions/preflight/handler.js';
import { handler as reconcile } from '../../functions/reconcile/handler.js';
import { handler as sampleRedrive } from '../../functions/sample-redrive/handler.js';
import { handler as verifySample } from '../../functions/verify-sample/handler.js';
import { lambdaContext, planFor } from '../support/redrive-fixtures.js';

// Every SDK command the shared SQS and DynamoDB clients send (the document client shares the latter's stack) is counted (and refused, so nothing leaves the process).
const sent: string[] = [];
const middlewareName = 'count-and-refuse-hostile-input';
function countOn(client: { middlewareStack: { add: (mw: unknown, options: unknown) => void } }) {
  client.middlewareStack.add(
    (_next: unknown, context: { commandName?: string }) => async () => {
      sent.push(context.commandName ?? '?');
      throw new Error('no AWS call expected');
    },
    { step: 'initialize', name: middlewareName },
  );
}

const plan = planFor({
  dlqArn: 'arn:aws:sqs:us-east-1:123456789012:d',
  dlqUrl: 'http://x/d',
  incidentId: 'i',
});
type Handler = (e: never, c: typeof lambdaContext) => Promise<unknown>;
const failOf = async (h: Handler, event: unknown) =>
  (await h(event as never, lambdaContext).then(
    () => undefined,
    (e: unknown) => e,
  )) as InvalidInputError | undefined;

const cases: Array<[string, Handler, unknown, string[]]> = [
  ['Preflight: plan null', preflight, { action: 'preflight', plan: null }, ['plan']],
  [
    'Preflight: sampleSize as a string',
    preflight,
    { plan: { ...plan, sampleSize: '5' } },
    ['plan.sampleSize'],
  ],
  [
    'Park: rampRates 0 and 501',
    park,
    { plan: { ...plan, rampRates: [0, 501] } },
    ['plan.rampRates.0', 'plan.rampRates.1'],
  ],
  ['Park: a non-integer rate', park, { plan: { ...plan, rampRates: [2.5] } }, ['plan.rampRates.0']],
  ['Park: an array for a plan', park, { plan: [] }, ['plan']],
  [
    'SampleRedrive: preflight.fifo as a string',
    sampleRedrive,
    { plan, preflight: { verifyWindowSeconds: 1, fifo: 'no' } },
    ['preflight.fifo'],
  ],
  [
    'SampleRedrive: sampleSize 0',
    sampleRedrive,
    { plan: { ...plan, sampleSize: 0 }, preflight: { verifyWindowSeconds: 1, fifo: false } },
    ['plan.sampleSize'],
  ],
  [
    'VerifySample: keys not an array',
    verifySample,
    { plan, sample: { redriveId: 'i', sent: 1, alreadySent: 0, keys: 'k', verifyAfterSeconds: 1 } },
    ['sample.keys'],
  ],
  ['MoveTask: action missing', moveTask, { plan, preflight: { sourceArns: [] } }, ['action']],
  [
    'MoveTask: sourceArns not strings',
    moveTask,
    { action: 'check', plan, preflight: { sourceArns: [1] } },
    ['preflight.sourceArns.0'],
  ],
  ['Reconcile: outcome a number', reconcile, { plan, outcome: 42 }, ['outcome']],
  [
    'Reconcile: an unknown plan field',
    reconcile,
    { plan: { ...plan, extra: 1 }, outcome: 'completed' },
    ['plan'],
  ],
  ['Notify: run a string', notify, { outcome: 'failed', run: 'x' }, ['run']],
];

describe('workflow handlers refuse malformed payloads with Redrive.InvalidInput and no SDK command', () => {
  beforeAll(() => {
    for (const c of [sqsClient(), dynamoClient()]) countOn(c as never);
  });
  afterAll(() => {
    for (const c of [sqsClient(), dynamoClient()])
      (c as unknown as { middlewareStack: { remove: (n: string) => void } }).middlewareStack.remove(
        middlewareName,
      );
  });

  it('counts the SDK commands of a well-formed payload (the counter works)', async () => {
    sent.length = 0;
    const error = await failOf(park, { plan });
    expect(error?.name).not.toBe('Redrive.InvalidInput');
    expect(sent.length).toBeGreaterThan(0);
  });

  it.each(cases)('%s', async (_name, handler, event, expected) => {
    sent.length = 0;
    const error = await failOf(handler, event);
    expect(error?.name).toBe('Redrive.InvalidInput');
    const fields = (error?.details ?? []).map((d) => d.split(':')[0]);
    expect(fields).toEqual(expect.arrayContaining(expected));
    expect(sent).toEqual([]);
  });
});
