import { describe, expect, it } from 'vitest';
import type { InvalidInputError } from '#platform/errors.js';
import { handler as moveTask } from '../../functions/move-task/handler.js';
import { handler as notify } from '../../functions/notify/handler.js';
import { handler as park } from '../../functions/park/handler.js';
import { handler as preflight } from '../../functions/preflight/handler.js';
import { handler as reconcile } from '../../functions/reconcile/handler.js';
import { handler as sampleRedrive } from '../../functions/sample-redrive/handler.js';
import { handler as verifySample } from '../../functions/verify-sample/handler.js';
import { lambdaContext, planFor } from '../support/redrive-fixtures.js';

// No local stack runs in this file: a handler that got past input parsing would fail with an SDK
// error, not Redrive.InvalidInput.
const plan = planFor({
  dlqArn: 'arn:aws:sqs:us-east-1:123456789012:d',
  dlqUrl: 'http://x/d',
  incidentId: 'i',
});
const fail = async (h: (e: never, c: typeof lambdaContext) => Promise<unknown>, event: unknown) =>
  (await h(event as never, lambdaContext).then(
    () => undefined,
    (e: unknown) => e,
  )) as InvalidInputError;
const fields = (e: InvalidInputError) => e.details.map((d) => d.split(':')[0]);

describe('workflow function handlers reject malformed payloads before any AWS call', () => {
  it('Preflight names the bad action and the missing plan field', async () => {
    const { dlqUrl: _omit, ...noUrl } = plan;
    const error = await fail(preflight, { action: 'launch', plan: noUrl });
    expect(error.name).toBe('Redrive.InvalidInput');
    expect(fields(error)).toEqual(['action', 'plan.dlqUrl']);
  });

  it('MoveTask refuses an unknown action and a ramp with a negative rate', async () => {
    const error = await fail(moveTask, {
      action: 'turbo',
      plan,
      preflight: { sourceArns: [] },
      ramp: { rate: -5 },
    });
    expect(fields(error)).toEqual(expect.arrayContaining(['action', 'ramp.rate']));
  });

  it('SampleRedrive, VerifySample, Park and Reconcile name their missing slots', async () => {
    expect(fields(await fail(sampleRedrive, { plan }))).toEqual(['preflight']);
    expect(fields(await fail(verifySample, { plan }))).toEqual(['sample']);
    expect(fields(await fail(park, {}))).toEqual(['plan']);
    expect(fields(await fail(reconcile, { outcome: 'completed' }))).toEqual(['plan']);
  });

  it('Notify needs an outcome and the run document', async () => {
    expect(fields(await fail(notify, { run: {} }))).toEqual(['outcome']);
    expect(fields(await fail(notify, { outcome: 'failed' }))).toEqual(['run']);
  });
});
