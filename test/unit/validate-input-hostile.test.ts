/**
 * ValidateInput against hostile console inputs: each is refused naming its field, and the ports
 * (registration read, GetQueueUrl) are never called.
 */
import { describe, expect, it } from 'vitest';
import type { InvalidInputError } from '#platform/errors.js';
import { type ValidateInputDeps, validateInput } from '../../functions/validate-input/validate-input.js';
import { scaled } from '../support/timeouts.js';

const DLQ = 'arn:aws:sqs:us-east-1:111122223333:orders-dlq';

/** Ports that count every call: a refused input must leave the count at 0. */
function countingDeps(): ValidateInputDeps & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    region: 'us-east-1',
    queues: {
      async queueUrl(queueArn) {
        calls.push(`queueUrl ${queueArn}`);
        return `https://sqs.us-east-1.amazonaws.com/111122223333/${queueArn.split(':').at(-1)}`;
      },
    },
    registrations: {
      async getRegistration(dlqArn) {
        calls.push(`getRegistration ${dlqArn}`);
        return {
          dlqArn,
          sampleSize: 5,
          rampRates: [5, 50, 200],
          dwellSeconds: 60,
          maxRedrives: 3,
          allowPreApproved: true,
        } as unknown as Awaited<ReturnType<ValidateInputDeps['registrations']['getRegistration']>>;
      },
    },
  };
}

async function refused(rawJson: string): Promise<{ error: InvalidInputError; calls: string[] }> {
  const deps = countingDeps();
  const error = (await validateInput({ input: JSON.parse(rawJson), executionName: 'hostile' }, deps).then(
    () => {
      throw new Error(`expected a refusal of ${rawJson.slice(0, 80)}`);
    },
    (e: unknown) => e,
  )) as InvalidInputError;
  return { error, calls: deps.calls };
}

describe('ValidateInput with hostile console input', () => {
  it('C20 a "__proto__" key is refused as an unknown field instead of being silently ignored', async () => {
    const { error, calls } = await refused(`{"dlqArn":"${DLQ}","__proto__":{"sampleSize":1}}`);
    expect([error.name, error.message]).toEqual([
      'Redrive.InvalidInput',
      'invalid execution input: __proto__: is not an execution input field',
    ]);
    expect(calls).toEqual([]);
  });

  it.each([
    ['a right-to-left override', 'requestedBy', '\u202Eevil'],
    ['a zero-width space', 'approvedBy', 'sre\u200Blead'],
    ['a line separator', 'requestedBy', 'jane\u2028doe'],
    ['an unpaired surrogate', 'approvedBy', 'jane\uD800'],
    ['a C1 control character', 'requestedBy', 'jane\u0085doe'],
  ])('C20 a name with %s is refused naming %s, before any call', async (_what, field, value) => {
    const { error, calls } = await refused(JSON.stringify({ dlqArn: DLQ, [field]: value }));
    expect(error.name).toBe('Redrive.InvalidInput');
    expect(error.details).toHaveLength(1);
    expect(error.details[0]).toMatch(new RegExp(`^${field}: must be a non-blank string .*format characters`));
    expect(calls).toEqual([]);
  });

  it('still accepts names with accents, emoji and CJK characters', async () => {
    const deps = countingDeps();
    const plan = await validateInput(
      { input: { dlqArn: DLQ, requestedBy: 'Zoë 😀 山田', approvedBy: 'José' }, executionName: 'ok' },
      deps,
    );
    expect([plan.requestedBy, plan.approvedBy]).toEqual(['Zoë 😀 山田', 'José']);
  });

  it('C20 nulls, numbers as strings, descending and giant ramps, and 20,000 unknown keys are each refused at once, before any call', async () => {
    const cases: Array<[string, RegExp]> = [
      [`{"dlqArn":"${DLQ}","sampleSize":null}`, /^sampleSize: must be an integer 1\.\.100, got null$/],
      [`{"dlqArn":"${DLQ}","sampleSize":"5"}`, /^sampleSize: must be an integer 1\.\.100, got "5"$/],
      [`{"dlqArn":"${DLQ}","rampRates":[200,50,5]}`, /^rampRates: must be strictly ascending/],
      [
        `{"dlqArn":"${DLQ}","rampRates":[${Array.from({ length: 100_000 }, (_, i) => i + 1).join(',')}]}`,
        /^rampRates: must list at most 10 rates$/,
      ],
      [`{"dlqArn":"${DLQ}","sampleSize":1e400}`, /^sampleSize: must be an integer 1\.\.100/],
      [`{"dlqArn":" ${DLQ}"}`, /^dlqArn: must be an SQS ARN/],
    ];
    for (const [raw, first] of cases) {
      const { error, calls } = await refused(raw);
      expect(error.details[0], raw.slice(0, 60)).toMatch(first);
      expect(calls).toEqual([]);
    }
    const many = `{"dlqArn":"${DLQ}",${Array.from({ length: 20_000 }, (_, i) => `"k${i}":1`).join(',')}}`;
    const started = Date.now();
    const { error, calls } = await refused(many);
    // Linear work, not quadratic: well under 5 s on a quiet machine, scaled by the run's load.
    expect(Date.now() - started).toBeLessThan(scaled(5_000));
    expect(error.details).toHaveLength(41);
    expect(error.details.at(-1)).toBe('... and 19960 more problems');
    expect(calls).toEqual([]);
  });

  it('C20 an ARN whose partition does not match the pipeline region is refused naming the field, before any call', async () => {
    const { error, calls } = await refused(
      JSON.stringify({ dlqArn: 'arn:aws-cn:sqs:us-east-1:111122223333:orders-dlq' }),
    );
    expect(error.details).toEqual([
      'dlqArn: partition aws-cn does not match region us-east-1 (use arn:aws:sqs:...)',
    ]);
    expect(calls).toEqual([]);
  });
});
