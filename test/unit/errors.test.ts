/**
 * The error model (functions/shared/platform/errors.ts): one class per code, each thrown somewhere
 * in the pipeline, names that survive minification, the ASL retrying exactly the retryable names,
 * and conditional-check failures recognised one way.
 */
import { readFileSync } from 'node:fs';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import * as errors from '#platform/errors.js';
import {
  AccessDeniedError,
  asTransient,
  BodyIntegrityError,
  ConfigurationError,
  InternalError,
  InvalidInputError,
  isConditionalCheckFailed,
  KmsKeyError,
  QueueNotFoundError,
  RecordNotFoundError,
  RedriveError,
  type RedriveErrorCode,
  RedriveRefusedError,
  StateConflictError,
  TaskClosedError,
  TransientError,
  UnknownShapeVersionError,
} from '#platform/errors.js';
import { functionSources, withoutComments } from '../support/source-files.js';

/** One instance of every class, keyed by its code (the type makes a new code need an entry here). */
const ONE_OF_EACH: Record<RedriveErrorCode, RedriveError> = {
  INVALID_INPUT: new InvalidInputError('invalid input', ['dlqArn: is required']),
  INVALID_CONFIG: new ConfigurationError(['TABLE_NAME: must be a DynamoDB table name']),
  QUEUE_NOT_FOUND: new QueueNotFoundError('arn:aws:sqs:us-east-1:123456789012:gone'),
  ACCESS_DENIED: new AccessDeniedError('sqs:ReceiveMessage', 'arn:aws:sqs:us-east-1:123456789012:q'),
  KMS_KEY_UNUSABLE: new KmsKeyError('orders-dlq', 'kms:Decrypt', 'KmsDisabled', 'key is disabled'),
  REDRIVE_REFUSED: new RedriveRefusedError('queue types differ'),
  TRANSIENT: new TransientError('throttled'),
  RECORD_NOT_FOUND: new RecordNotFoundError('incident inc-1'),
  STATE_CONFLICT: new StateConflictError('envelope m-1', 'IN_DLQ', 'REDRIVEN'),
  TASK_CLOSED: new TaskClosedError('task-timed-out'),
  BODY_INTEGRITY: new BodyIntegrityError('m-1', 'found 1 of 2 chunks'),
  UNKNOWN_SHAPE_VERSION: new UnknownShapeVersionError('envelope', 'envelope m-1', 2, 1),
  INTERNAL: new InternalError('boom'),
};

const ERROR_CLASSES = Object.entries(errors).filter(
  ([, value]) => typeof value === 'function' && value.prototype instanceof RedriveError,
);

const definition = JSON.parse(
  readFileSync(new URL('../../statemachines/redrive.asl.json', import.meta.url), 'utf8'),
) as {
  States: Record<
    string,
    {
      Type: string;
      Resource?: string;
      Retry?: Array<{ ErrorEquals: string[] }>;
      Catch?: Array<{ ErrorEquals: string[] }>;
    }
  >;
};

describe('error classes', () => {
  it('give every code exactly one class, with a distinct literal name, and carry their code', () => {
    const instances = Object.entries(ONE_OF_EACH);
    for (const [code, error] of instances) expect(error.code, error.name).toBe(code);
    expect(new Set(instances.map(([, e]) => e.name)).size).toBe(instances.length);
    expect(ERROR_CLASSES.map(([name]) => name).sort()).toEqual(
      instances.map(([, e]) => e.constructor.name).sort(),
    );
    for (const [, error] of instances)
      expect(error.name, error.constructor.name).toMatch(/^Redrive\.[A-Z][A-Za-z]+$|^RedriveError$/);
  });

  it('mark only Redrive.Transient retryable', () => {
    const retryable = Object.values(ONE_OF_EACH)
      .filter((e) => e.retryable)
      .map((e) => e.name);
    expect(retryable).toEqual(['Redrive.Transient']);
  });

  it('are each thrown somewhere in functions/ (no code that nothing throws)', () => {
    const source = functionSources()
      .filter((f) => f.path !== 'shared/platform/errors.ts')
      .map((f) => withoutComments(f.text))
      .join('\n');
    // InternalError is made by toRedriveError, in errors.ts itself, for every unknown throw.
    const unused = ERROR_CLASSES.map(([name]) => name).filter(
      (name) => name !== 'InternalError' && !source.includes(`new ${name}(`),
    );
    expect(unused).toEqual([]);
    expect(errors.toRedriveError(new TypeError('boom'))).toBeInstanceOf(InternalError);
  });

  it('keep their names in a minified bundle without keepNames (the name Step Functions matches)', async () => {
    const out = await build({
      stdin: {
        contents: `import * as e from './functions/shared/platform/errors.ts';
          export const names = [new e.TransientError('x').name, new e.RedriveRefusedError('x').name,
            new e.InvalidInputError('x').name, e.toRedriveError(new Error('x')).name];`,
        resolveDir: new URL('../../', import.meta.url).pathname,
        loader: 'ts',
      },
      bundle: true,
      minify: true,
      keepNames: false,
      format: 'esm',
      platform: 'node',
      external: ['@aws-sdk/*'],
      write: false,
    });
    const code = out.outputFiles[0]?.text ?? '';
    const module = (await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`)) as {
      names: string[];
    };
    expect(module.names).toEqual([
      'Redrive.Transient',
      'Redrive.Refused',
      'Redrive.InvalidInput',
      'RedriveError',
    ]);
  });
});

describe('the ASL and the error names', () => {
  it('retries exactly the retryable pipeline names on every Task that runs pipeline code and matches no name nothing throws', () => {
    const retryable = Object.values(ONE_OF_EACH)
      .filter((e) => e.retryable)
      .map((e) => e.name);
    const thrown = new Set(Object.values(ONE_OF_EACH).map((e) => e.name));
    for (const [name, state] of Object.entries(definition.States)) {
      // A service integration (startExecution of the continuation) runs no pipeline code.
      if (state.Type !== 'Task' || !/FunctionArn\}$|:lambda:invoke/.test(state.Resource ?? '')) continue;
      const ours = (state.Retry ?? []).flatMap((r) => r.ErrorEquals).filter((n) => n.startsWith('Redrive'));
      expect(ours, name).toEqual(retryable);
      const matched = [...(state.Retry ?? []), ...(state.Catch ?? [])]
        .flatMap((r) => r.ErrorEquals)
        .filter((n) => n.startsWith('Redrive'));
      expect(
        matched.filter((n) => !thrown.has(n)),
        name,
      ).toEqual([]);
    }
  });
});

describe('isConditionalCheckFailed', () => {
  it('recognises the SDK exception and nothing else', () => {
    const failed = new ConditionalCheckFailedException({
      message: 'The conditional request failed',
      $metadata: {},
    });
    expect(isConditionalCheckFailed(failed)).toBe(true);
    const throttled = Object.assign(new Error('slow down'), { name: 'ThrottlingException', $metadata: {} });
    expect(isConditionalCheckFailed(throttled)).toBe(false);
    expect(isConditionalCheckFailed(new StateConflictError('envelope m-1', 'IN_DLQ', 'PARKED'))).toBe(false);
    expect(isConditionalCheckFailed({ name: 'ConditionalCheckFailedException' })).toBe(false);
  });
});

describe('asTransient', () => {
  it('turns a throttle or a 5xx into a TransientError naming the action, and passes anything else through unchanged', () => {
    const throttled = Object.assign(new Error('Rate exceeded'), {
      name: 'ThrottlingException',
      $metadata: { httpStatusCode: 400 },
      $retryable: { throttling: true },
    });
    const unavailable = Object.assign(new Error('Service unavailable'), {
      $metadata: { httpStatusCode: 503 },
    });
    const denied = Object.assign(new Error('not allowed'), {
      name: 'AccessDeniedException',
      $metadata: { httpStatusCode: 400 },
    });

    const adapted = asTransient('dynamodb:GetItem (ledger)', throttled);
    expect(adapted).toBeInstanceOf(TransientError);
    expect((adapted as TransientError).message).toBe('dynamodb:GetItem (ledger): Rate exceeded');
    expect((adapted as TransientError).cause).toBe(throttled);
    expect(asTransient('sqs:ListMessageMoveTasks', unavailable)).toBeInstanceOf(TransientError);
    expect(asTransient('dynamodb:PutItem (ledger)', denied)).toBe(denied);
  });
});

describe('messages', () => {
  it('name the record, the expected and the actual state of a conflict', () => {
    expect(new StateConflictError('envelope m-1 in arn:dlq', 'IN_DLQ', 'REDRIVEN').message).toBe(
      'envelope m-1 in arn:dlq is in state REDRIVEN, not IN_DLQ',
    );
    expect(new RecordNotFoundError('incident inc-1').message).toBe('no incident inc-1');
  });
});
