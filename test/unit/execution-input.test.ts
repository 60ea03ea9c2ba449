import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ExecutionInput, ExecutionPlan, parseSqsArn, queueUrlToArnHint } from '#incident/execution-input.js';
import { incidentIdOf } from '#incident/incident-store.js';
import { QueueRegistration } from '#inventory/model.js';
import { InvalidInputError, QueueNotFoundError } from '#platform/errors.js';
import { createQueueLocator } from '../../functions/validate-input/queue-locator.js';
import {
  deriveIncidentId,
  parseExecutionInput,
  type ValidateInputDeps,
  validateInput,
} from '../../functions/validate-input/validate-input.js';
import { schemaFiles } from '../../scripts/export-schemas.js';

const EVENTS = new URL('../../events/console/', import.meta.url);
const INVALID = new URL('invalid/', EVENTS);
const ROOT = new URL('../../', import.meta.url);

function loadJson(dir: URL, name: string): unknown {
  return JSON.parse(readFileSync(new URL(name, dir), 'utf8'));
}
const examples = readdirSync(EVENTS).filter((f) => f.endsWith('.json'));

/** The problems of a rejected input, exactly as ValidateInput lists them. */
function problemsOf(input: unknown): readonly string[] {
  try {
    parseExecutionInput(input);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return (error as InvalidInputError).details;
  }
  throw new Error('expected the input to be rejected');
}

/**
 * What the Node.js Lambda runtime sends back for a thrown error, and what Step Functions then shows
 * as the Task's `Error` and `Cause` (the runtime's `errorType` is the error's `name`).
 * @see https://docs.aws.amazon.com/lambda/latest/dg/nodejs-exceptions.html
 */
function asStepFunctionsFailure(error: Error): { Error: string; Cause: string } {
  const payload = {
    errorType: error.name,
    errorMessage: error.message,
    trace: (error.stack ?? '').split('\n'),
  };
  return { Error: payload.errorType, Cause: JSON.stringify(payload) };
}

/** Fake ports that count every call: the no-side-effect assertions read `calls`. */
function fakeDeps(
  options: { registration?: Partial<QueueRegistration>; missing?: string[]; parkingQueueUrl?: string } = {},
) {
  const calls: string[] = [];
  const deps: ValidateInputDeps = {
    region: 'us-east-1',
    defaultParkingQueueUrl: options.parkingQueueUrl,
    queues: {
      async queueUrl(arn) {
        calls.push(`GetQueueUrl ${arn}`);
        if (options.missing?.includes(arn)) throw new QueueNotFoundError(arn);
        const parsed = parseSqsArn(arn);
        return `https://sqs.${parsed?.region}.amazonaws.com/${parsed?.accountId}/${parsed?.queueName}`;
      },
    },
    registrations: {
      async getRegistration(dlqArn) {
        calls.push(`GetRegistration ${dlqArn}`);
        return {
          ...QueueRegistration.parse({ dlqArn: 'arn:aws:sqs:us-east-1:111122223333:x' }),
          ...options.registration,
          dlqArn,
        };
      },
    },
  };
  return { deps, calls };
}

describe('execution input examples (events/console)', () => {
  it('ships the documented examples', () => {
    expect(examples.sort()).toEqual([
      'dry-run.json',
      'edit-resubmit.json',
      'fifo.json',
      'full.json',
      'minimal.json',
      'pre-approved.json',
      'selective-cause.json',
      'shared-dlq-custom-destination.json',
      'unpark.json',
    ]);
  });

  it.each(examples.filter((e) => !['edit-resubmit.json', 'selective-cause.json', 'unpark.json'].includes(e)))(
    '%s passes the schema and becomes a plan every later state can parse',
    async (name) => {
      const input = loadJson(EVENTS, name);
      expect(ExecutionInput.safeParse(input).success).toBe(true);
      const { deps } = fakeDeps({ registration: { allowPreApproved: true } });
      const plan = await validateInput(input, deps);
      expect(ExecutionPlan.parse(plan)).toEqual(plan);
      expect(plan.dlqArn).toBe((input as { dlqArn: string }).dlqArn);
    },
  );

  it('fills every default of the minimal example from the registration', async () => {
    const { deps } = fakeDeps({
      registration: { sampleSize: 7, rampRates: [2, 20], dwellSeconds: 90, maxRedrives: 4 },
    });
    const plan = await validateInput(loadJson(EVENTS, 'minimal.json'), deps);
    expect(plan).toEqual({
      incidentId: plan.incidentId,
      dlqArn: 'arn:aws:sqs:us-east-1:111122223333:orders-dlq',
      dlqUrl: 'https://sqs.us-east-1.amazonaws.com/111122223333/orders-dlq',
      mode: 'redrive',
      destinationArn: null,
      allowCustomDestinationForSharedDlq: false,
      sampleSize: 7,
      rampRates: [2, 20],
      dwellSeconds: 90,
      verifyMarginSeconds: 30,
      discardPoison: false,
      preApproved: false,
      approvedBy: null,
      requestedBy: 'console',
      parkingQueueUrl: null,
      maxRedrives: 4,
      selection: null,
      unpark: false,
      transform: null,
      inventoryId: null,
      historyEventLimit: 25_000,
      continuation: 0,
    });
    expect(plan.incidentId).toMatch(/^console-orders-dlq-[0-9a-f]{16}$/);
  });

  it('keeps every field the full example sets', async () => {
    const { deps } = fakeDeps();
    const plan = await validateInput(loadJson(EVENTS, 'full.json'), deps);
    expect(plan).toMatchObject({
      incidentId: 'inc-orders-dlq-2026-01-02',
      sampleSize: 10,
      rampRates: [10, 50, 100, 250],
      dwellSeconds: 120,
      verifyMarginSeconds: 60,
      requestedBy: 'jane.doe@example.com',
    });
  });
});

describe('selection, un-park and transform (the recording mover)', () => {
  it('copies the selection, un-park flag and transform of the examples into the plan', async () => {
    const { deps } = fakeDeps();
    const selective = await validateInput(loadJson(EVENTS, 'selective-cause.json'), deps);
    expect([selective.selection, selective.unpark, selective.transform]).toEqual([
      { causes: ['TimeoutError|upstream timed out after # ms'], classifications: ['transient'] },
      false,
      null,
    ]);
    const unpark = await validateInput(loadJson(EVENTS, 'unpark.json'), deps);
    expect([unpark.unpark, unpark.selection?.attributes]).toEqual([
      true,
      [{ name: 'tenant', equals: 'acme' }],
    ]);
    const edit = await validateInput(loadJson(EVENTS, 'edit-resubmit.json'), deps);
    expect(edit.transform).toEqual({
      mergePatch: { currency: 'EUR' },
      setAttributes: [{ name: 'schema-version', value: '2' }],
      reason: 'producer sent lower-case currency codes (INC-4711); consumer accepts ISO 4217 only',
    });
  });

  it('names every bad condition of a selection by its path', () => {
    expect(
      problemsOf({
        dlqArn: 'arn:aws:sqs:us-east-1:111122223333:orders-dlq',
        selection: {
          causes: [],
          attributes: [{ name: 'AWS.trace', equals: 3 }],
          body: [
            { jsonPath: 'a.b', equals: { x: 1 } },
            { jsonPath: '$.a', equals: 1, extra: true },
          ],
          messageIds: ['has space'],
        },
      }),
    ).toEqual([
      'selection.causes: must list at least one cause',
      'selection.attributes.0.name: must be a message attribute name (1-256 of A-Za-z0-9_-., not starting with AWS. or Amazon.), got "AWS.trace"',
      'selection.attributes.0.equals: must be a non-blank string of at most 1024 characters, without control characters, got 3',
      'selection.body.0.jsonPath: must be a JSON path like $.a.b, got "a.b"',
      'selection.body.0.equals: must be a string, number, boolean or null, got {"x":1}',
      'selection.body.1.extra: is not a field of a body condition (known: jsonPath, equals)',
      'selection.messageIds.0: must be a DLQ MessageId, got "has space"',
    ]);
  });

  it('refuses a transform that would rewrite the pipeline attributes or a FIFO deduplication id', () => {
    expect(
      problemsOf({
        dlqArn: 'arn:aws:sqs:us-east-1:111122223333:orders-dlq.fifo',
        transform: {
          removeAttributes: ['idempotency-key', 'MessageDeduplicationId'],
          reason: 'tidy up',
        },
      }),
    ).toEqual([
      'transform: may not change idempotency-key: the pipeline writes it on every copy',
      "transform: may not change MessageDeduplicationId: changing a FIFO message's group or deduplication id would reorder or drop it",
    ]);
  });

  it('refuses discardPoison on an un-park run, naming the field', () => {
    expect(
      problemsOf({
        dlqArn: 'arn:aws:sqs:us-east-1:111122223333:orders-dlq',
        unpark: true,
        discardPoison: true,
      }),
    ).toEqual([
      'discardPoison: does not apply to an un-park run (it parks and discards nothing: it sends parked messages back); omit it',
    ]);
    expect(
      ExecutionInput.safeParse({
        dlqArn: 'arn:aws:sqs:us-east-1:111122223333:orders-dlq',
        unpark: false,
        discardPoison: true,
      }).success,
    ).toBe(true);
  });

  it('refuses un-park given as text and a transform without any change', () => {
    expect(
      problemsOf({
        dlqArn: 'arn:aws:sqs:us-east-1:111122223333:orders-dlq',
        unpark: 'yes',
        transform: { reason: 'nothing' },
      }),
    ).toEqual([
      'unpark: must be true or false, got "yes"',
      'transform: must give at least one of mergePatch, setAttributes, removeAttributes',
    ]);
  });
});

describe('C20 hand-started executions with bad or partial input', () => {
  it.each([
    ['empty-object.json', ['dlqArn: is required']],
    ['missing-dlq-arn.json', ['dlqArn: is required']],
    [
      'queue-url-instead-of-arn.json',
      ['dlqArn: must be an SQS ARN, got a queue URL (use arn:aws:sqs:us-east-1:111122223333:orders-dlq)'],
    ],
    [
      'wrong-types.json',
      [
        'sampleSize: must be >= 1 (an integer 1..100), got -3',
        'maxRate: must be an integer 1..500, got "fifty"',
      ],
    ],
    ['unknown-mode.json', ['mode: must be one of redrive, sample-only, dry-run, got "delete-all"']],
    ['json-string.json', ['(root): must be a JSON object with at least dlqArn, got "dlqArn=orders-dlq"']],
    ['misspelt-field.json', ['samplesize: is not an execution input field (did you mean sampleSize?)']],
    [
      'ramp-not-ascending-above-max-rate.json',
      [
        'rampRates.2: must be <= 500 (an integer 1..500), got 600',
        'rampRates: must be strictly ascending, got [50,5,600]',
        'rampRates: must not exceed maxRate 40, got [50,600]',
      ],
    ],
    [
      'fifo-dlq-standard-destination.json',
      ['destinationArn: queue types differ (FIFO vs standard): the DLQ is FIFO, the destination is standard'],
    ],
    [
      'bad-selection-and-transform.json',
      [
        'selection.classifications.0: must be one of transient, permanent, poison, systemic, unknown, got "retryable"',
        'selection.cause: is not a field of selection (did you mean causes?)',
        "transform: may not change MessageGroupId: changing a FIFO message's group or deduplication id would reorder or drop it",
      ],
    ],
    [
      'empty-selection.json',
      [
        'selection: must give at least one of causes, classifications, attributes, body, messageIds',
        'transform.mergePatch: must be a JSON object (an RFC 7396 merge patch), got ["not","an","object"]',
        'transform.reason: is required: say why the messages are edited (audited)',
      ],
    ],
  ])('C20 %s is rejected with every problem named by its field', (name, expected) => {
    expect(problemsOf(loadJson(INVALID, name))).toEqual(expected);
  });

  it('C20 every file in events/console/invalid is covered by a test above', () => {
    expect(readdirSync(INVALID).length).toBe(12);
  });

  it('C20 lists problems of several fields at once, including a misspelt one', () => {
    expect(
      problemsOf({
        dlqArn: 'orders-dlq',
        mode: 'delete-all',
        maxRate: 0,
        sampleSize: 2.5,
        discardPoison: 'yes',
        approvedBy: ' ',
        maxrate: 5,
      }),
    ).toEqual([
      'dlqArn: must be an SQS ARN (arn:aws:sqs:<region>:<account-id>:<queue-name>), got "orders-dlq"',
      'mode: must be one of redrive, sample-only, dry-run, got "delete-all"',
      'sampleSize: must be an integer 1..100, got 2.5',
      'maxRate: must be >= 1 (an integer 1..500), got 0',
      'discardPoison: must be true or false, got "yes"',
      'approvedBy: must be a non-blank string of at most 128 characters, without control characters, got " "',
      'maxrate: is not an execution input field (did you mean maxRate?)',
    ]);
  });

  it('C20 the error reaches Step Functions as Redrive.InvalidInput with every problem in the Cause', () => {
    const error = (() => {
      try {
        parseExecutionInput(loadJson(INVALID, 'wrong-types.json'));
      } catch (e) {
        return e as Error;
      }
      throw new Error('expected a rejection');
    })();
    const failure = asStepFunctionsFailure(error);
    expect(failure.Error).toBe('Redrive.InvalidInput');
    const cause = JSON.parse(failure.Cause) as { errorType: string; errorMessage: string };
    expect(cause.errorType).toBe('Redrive.InvalidInput');
    expect(cause.errorMessage).toBe(
      'invalid execution input: sampleSize: must be >= 1 (an integer 1..100), got -3; maxRate: must be an integer 1..500, got "fifty"',
    );
  });

  it('C20 an input with hundreds of problems still fits the 32,768-character Cause Step Functions keeps', () => {
    const input = Object.fromEntries(
      Array.from({ length: 500 }, (_, i) => [`field${i}${'x'.repeat(300)}`, i]),
    );
    const error = (() => {
      try {
        parseExecutionInput(input);
      } catch (e) {
        return e as InvalidInputError;
      }
      throw new Error('expected a rejection');
    })();
    expect(error.details).toHaveLength(41);
    expect(error.details[0]).toBe('dlqArn: is required');
    expect(error.details.at(-1)).toBe('... and 461 more problems');
    expect(asStepFunctionsFailure(error).Cause.length).toBeLessThan(32_768);
  });

  it('C20 "not JSON at the API level" never reaches the schema: it is not a JSON document at all', () => {
    const raw = readFileSync(new URL('not-json.txt', INVALID), 'utf8');
    // StartExecution refuses it with InvalidExecutionInput before any state runs (docs/console.md).
    expect(() => JSON.parse(raw)).toThrow(SyntaxError);
  });

  it('C20 makes no call to SQS or DynamoDB before the input is valid', async () => {
    for (const name of readdirSync(INVALID).filter((f) => f.endsWith('.json'))) {
      const { deps, calls } = fakeDeps();
      const error = await validateInput(loadJson(INVALID, name), deps).catch((e: unknown) => e);
      expect([name, (error as Error).name]).toEqual([name, 'Redrive.InvalidInput']);
      expect(calls).toEqual([]);
    }
  });
});

describe('the plan', () => {
  const dlqArn = 'arn:aws:sqs:us-east-1:111122223333:orders-dlq';

  it('refuses approvedBy when the registration does not allow pre-approved starts, before resolving any queue', async () => {
    const { deps, calls } = fakeDeps();
    const error = (await validateInput({ dlqArn, approvedBy: 'lead' }, deps).catch(
      (e: unknown) => e,
    )) as InvalidInputError;
    expect([error.name, ...error.details]).toEqual([
      'Redrive.InvalidInput',
      'approvedBy: pre-approved starts are not allowed for this queue',
    ]);
    expect(calls).toEqual([`GetRegistration ${dlqArn}`]);
  });

  it('marks the plan pre-approved when the registration allows it', async () => {
    const { deps } = fakeDeps({ registration: { allowPreApproved: true } });
    const plan = await validateInput(loadJson(EVENTS, 'pre-approved.json'), deps);
    expect([plan.preApproved, plan.approvedBy]).toEqual([true, 'sre-lead@example.com']);
  });

  it('caps the registration ramp with maxRate: [5, 50, 200] at 100 becomes [5, 50, 100]', async () => {
    const { deps } = fakeDeps({ registration: { rampRates: [5, 50, 200] } });
    expect((await validateInput({ dlqArn, maxRate: 100 }, deps)).rampRates).toEqual([5, 50, 100]);
    expect((await validateInput({ dlqArn, maxRate: 3 }, deps)).rampRates).toEqual([3]);
  });

  it('refuses a queue in another region than the pipeline, naming the field, before any call', async () => {
    const { deps, calls } = fakeDeps();
    const error = (await validateInput(
      { dlqArn: 'arn:aws:sqs:eu-west-1:111122223333:orders-dlq' },
      deps,
    ).catch((e: unknown) => e)) as InvalidInputError;
    expect(error.details).toEqual([
      'dlqArn: the queue is in eu-west-1, but this pipeline runs in us-east-1 (start the pipeline deployed in eu-west-1)',
    ]);
    expect(calls).toEqual([]);
  });

  it('fails with Redrive.QueueNotFound when the destination queue does not exist', async () => {
    const destinationArn = 'arn:aws:sqs:us-east-1:111122223333:gone';
    const { deps } = fakeDeps({ missing: [destinationArn] });
    const error = (await validateInput({ dlqArn, destinationArn }, deps).catch((e: unknown) => e)) as Error;
    expect([error.name, error.message]).toEqual([
      'Redrive.QueueNotFound',
      `queue not found: ${destinationArn}`,
    ]);
  });

  it('takes the parking queue from the registration, else from PARKING_QUEUE_URL', async () => {
    const parkingQueueArn = 'arn:aws:sqs:us-east-1:111122223333:orders-parking';
    const registered = fakeDeps({
      registration: { parkingQueueArn },
      parkingQueueUrl: 'https://env/parking',
    });
    expect((await validateInput({ dlqArn }, registered.deps)).parkingQueueUrl).toBe(
      'https://sqs.us-east-1.amazonaws.com/111122223333/orders-parking',
    );
    const fromEnv = fakeDeps({ parkingQueueUrl: 'https://env/parking' });
    expect((await validateInput({ dlqArn }, fromEnv.deps)).parkingQueueUrl).toBe('https://env/parking');
  });
});

describe('C19 the derived incident id of a console start', () => {
  const input = { dlqArn: 'arn:aws:sqs:us-east-1:111122223333:orders-dlq', requestedBy: 'jane' };

  it('C19 is the same for a retried invocation of the same execution and differs between executions', async () => {
    const { deps } = fakeDeps();
    const first = await validateInput({ input, executionName: 'orders-redrive-1' }, deps);
    const retried = await validateInput({ input, executionName: 'orders-redrive-1' }, deps);
    const other = await validateInput({ input, executionName: 'orders-redrive-2' }, deps);
    expect(first.incidentId).toBe(retried.incidentId);
    expect(other.incidentId).not.toBe(first.incidentId);
    expect(first.incidentId).toBe(deriveIncidentId(input, 'orders-redrive-1'));
  });

  it('C19 without an execution name depends only on the input, not on key order or time', async () => {
    const { deps } = fakeDeps();
    const a = await validateInput(input, deps);
    const b = await validateInput({ requestedBy: 'jane', dlqArn: input.dlqArn }, deps);
    const c = await validateInput({ ...input, requestedBy: 'joe' }, deps);
    expect(a.incidentId).toBe(b.incidentId);
    expect(c.incidentId).not.toBe(a.incidentId);
  });

  it('C19 the ASL form { input } without a name derives the same id as the bare input', async () => {
    const { deps } = fakeDeps();
    const wrapped = await validateInput({ input }, deps);
    expect(wrapped.incidentId).toBe((await validateInput(input, deps)).incidentId);
    expect(wrapped.incidentId).toBe(deriveIncidentId(input, undefined));
  });

  it('C19 keeps the incident id triage set', async () => {
    const { deps } = fakeDeps();
    const plan = await validateInput({ input: { ...input, incidentId: 'inc-1' }, executionName: 'x' }, deps);
    expect(plan.incidentId).toBe('inc-1');
  });
});

describe('the input triage sends', () => {
  it('passes unchanged: triage keeps its incident id and is recorded as the requester', async () => {
    const dlqArn = 'arn:aws:sqs:us-east-1:111122223333:orders-dlq';
    const incidentId = incidentIdOf(
      'arn:aws:cloudwatch:us-east-1:111122223333:alarm:orders-dlq-not-empty',
      '2026-01-02T10:35:00.000+0000',
      dlqArn,
    );
    const { deps } = fakeDeps();
    const plan = await validateInput({ input: { dlqArn, incidentId, requestedBy: 'triage' } }, deps);
    expect([plan.incidentId, plan.requestedBy, plan.preApproved]).toEqual([incidentId, 'triage', false]);
  });
});

describe('queue locator (GetQueueUrl errors, client stubbed: rare paths)', () => {
  /** An SQS client whose send fails like the SDK does, with `$metadata` and a name. */
  function failingClient(name: string, httpStatusCode: number) {
    const error = Object.assign(new Error(name), { name, $metadata: { httpStatusCode } });
    const sent: unknown[] = [];
    const client = {
      send: async (command: { input: unknown }) => {
        sent.push(command.input);
        throw error;
      },
    };
    return { client: client as unknown as Parameters<typeof createQueueLocator>[0], sent };
  }
  const dlqArn = 'arn:aws:sqs:us-east-1:444455556666:orders-dlq.fifo';

  it('asks GetQueueUrl for the ARN name in the ARN account', async () => {
    const { client, sent } = failingClient('QueueDoesNotExist', 400);
    const error = (await createQueueLocator(client)
      .queueUrl(dlqArn)
      .catch((e: unknown) => e)) as Error;
    expect(sent).toEqual([{ QueueName: 'orders-dlq.fifo', QueueOwnerAWSAccountId: '444455556666' }]);
    expect([error.name, error.message]).toEqual(['Redrive.QueueNotFound', `queue not found: ${dlqArn}`]);
  });

  it.each([
    ['AccessDenied', 403, 'Redrive.AccessDenied'],
    ['RequestThrottled', 400, 'Redrive.Transient'],
    ['InternalError', 500, 'Redrive.Transient'],
    ['InvalidParameterValue', 400, 'RedriveError'],
  ])('maps %s (HTTP %i) to %s', async (name, status, expected) => {
    const { client } = failingClient(name, status);
    const error = (await createQueueLocator(client)
      .queueUrl(dlqArn)
      .catch((e: unknown) => e)) as Error;
    expect(error.name).toBe(expected);
  });
});

describe('SQS ARNs and queue URLs', () => {
  it('parses standard and FIFO queue ARNs', () => {
    expect(parseSqsArn('arn:aws:sqs:us-east-1:111122223333:orders-dlq.fifo')).toEqual({
      partition: 'aws',
      region: 'us-east-1',
      accountId: '111122223333',
      queueName: 'orders-dlq.fifo',
      fifo: true,
    });
    expect(parseSqsArn('arn:aws:sns:us-east-1:111122223333:topic')).toBeUndefined();
    expect(parseSqsArn(`arn:aws:sqs:us-east-1:111122223333:${'q'.repeat(81)}`)).toBeUndefined();
  });

  it('names the ARN a queue URL stands for, in every URL form', () => {
    expect(queueUrlToArnHint('https://sqs.eu-west-1.amazonaws.com/111122223333/orders')).toBe(
      'arn:aws:sqs:eu-west-1:111122223333:orders',
    );
    expect(queueUrlToArnHint('https://eu-west-1.queue.amazonaws.com/111122223333/orders')).toBe(
      'arn:aws:sqs:eu-west-1:111122223333:orders',
    );
    expect(queueUrlToArnHint('https://sqs.cn-north-1.amazonaws.com.cn/111122223333/orders')).toBe(
      'arn:aws-cn:sqs:cn-north-1:111122223333:orders',
    );
    expect(queueUrlToArnHint('http://127.0.0.1:9324/111122223333/orders')).toBe(
      'arn:aws:sqs:<region>:111122223333:orders',
    );
    expect(queueUrlToArnHint('orders-dlq')).toBeUndefined();
  });
});

describe('statemachines/execution-input.schema.json', () => {
  it('is exactly what npm run schemas generates from the zod schema', () => {
    for (const [path, text] of Object.entries(schemaFiles())) {
      expect(readFileSync(new URL(path, ROOT), 'utf8'), `${path} is stale: run npm run schemas`).toBe(text);
    }
  });

  it('refuses unknown fields and requires only dlqArn', () => {
    const schema = JSON.parse(
      readFileSync(new URL('statemachines/execution-input.schema.json', ROOT), 'utf8'),
    ) as { required: string[]; additionalProperties: boolean; properties: Record<string, unknown> };
    expect([schema.required, schema.additionalProperties]).toEqual([['dlqArn'], false]);
    expect(Object.keys(schema.properties).sort()).toEqual([
      'allowCustomDestinationForSharedDlq',
      'approvedBy',
      'continuation',
      'destinationArn',
      'discardPoison',
      'dlqArn',
      'dwellSeconds',
      'historyEventLimit',
      'incidentId',
      'inventoryId',
      'maxRate',
      'mode',
      'rampRates',
      'requestedBy',
      'sampleSize',
      'selection',
      'transform',
      'unpark',
      'verifyMarginSeconds',
    ]);
  });
});
