/**
 * Local Lambda stand-in: `Invoke` on the wire protocol the SDK v3 client (3.1164.0) speaks,
 * restJson1 (`POST /2015-03-31/functions/<name>/invocations`, `X-Amz-Invocation-Type`), running
 * local handlers ({@link LambdaStandin.defineFunction}) as the functions.
 *
 * Asynchronous invocations (`Event`) answer 202 at once and run the handler with Lambda's retries
 * (`maximumRetryAttempts`, default 2, a short delay locally instead of 1 and 2 minutes); an event
 * that fails every attempt goes to the function's DLQ as Lambda sends it (the payload as body,
 * `RequestID`, `ErrorCode` (Number, 200 for a function error) and `ErrorMessage`), or, for an
 * on-failure destination, as an invocation record (`requestContext.condition` `RetriesExhausted`,
 * `requestPayload`, `responsePayload` with the error). `RequestResponse` runs the handler and
 * answers its result (`X-Amz-Function-Error: Unhandled` when it throws); `DryRun` answers 204.
 *
 * Not Lambda: no code, versions or aliases (a qualified ARN names the same handler), no
 * concurrency limits, no event age limit.
 *
 * @see https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html
 * @see https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html
 */
import { randomUUID } from 'node:crypto';
import { type Deliveries, type LocalHandler, type LocalHandlers, stringAttribute } from './delivery.js';
import { restJsonProtocol, type Standin, StandinError, startStandin } from './server.js';

/** How a local function is configured. */
export interface LocalFunction {
  name: string;
  handler: LocalHandler;
  /** Lambda's async retries. @default 2 */
  maximumRetryAttempts?: number;
  /** The function's async-invocation DLQ (an SQS queue ARN). */
  deadLetterArn?: string;
  /** An on-failure destination (an SQS queue ARN): gets an invocation record instead. */
  onFailureArn?: string;
}

/** The running stand-in. */
export interface LambdaStandin extends Standin {
  /** Defines (or replaces) a function; returns its ARN. */
  defineFunction(fn: LocalFunction): string;
  /** Every asynchronous invocation accepted: function ARN and payload text. */
  readonly invocations: Array<{ functionArn: string; payload: string; accessKeyId: string }>;
}

interface Defined extends LocalFunction {
  arn: string;
}

/** Starts the Lambda stand-in; deliveries share `handlers` with the SNS and EventBridge stand-ins. */
export async function startLambdaStandin(options: {
  region: string;
  accountId: string;
  handlers: LocalHandlers;
  deliveries: Deliveries;
}): Promise<LambdaStandin> {
  const functions = new Map<string, Defined>();
  const invocations: LambdaStandin['invocations'] = [];
  const find = (nameOrArn: string): Defined => {
    const name = nameOrArn.startsWith('arn:') ? (nameOrArn.split(':')[6] ?? '') : nameOrArn.split(':')[0];
    const fn = functions.get(name ?? '');
    if (!fn)
      throw new StandinError(
        'ResourceNotFoundException',
        `Function not found: arn:aws:lambda:${options.region}:${options.accountId}:function:${name}`,
        404,
      );
    return fn;
  };
  const errorOf = (error: Error) => ({
    errorType: error.name || 'Error',
    errorMessage: error.message,
    trace: [],
  });

  const standin = await startStandin({
    service: 'Lambda',
    protocol: restJsonProtocol([
      {
        method: 'POST',
        path: /^\/2015-03-31\/functions\/(?<FunctionName>[^/]+)\/invocations$/,
        operation: 'Invoke',
        headers: { 'x-amz-invocation-type': 'InvocationType', 'x-amz-client-context': 'ClientContext' },
        payloadMember: 'Payload',
      },
    ]),
    operations: {
      async Invoke(input, ctx) {
        const fn = find(String(input.FunctionName));
        const payload = Buffer.from(input.Payload as Uint8Array).toString('utf8');
        let event: unknown;
        try {
          event = payload === '' ? {} : JSON.parse(payload);
        } catch {
          throw new StandinError(
            'InvalidRequestContentException',
            'Could not parse request body into json',
            400,
          );
        }
        const type = String(input.InvocationType ?? 'RequestResponse');
        if (type === 'DryRun') return { status: 204 };
        if (type === 'Event') {
          invocations.push({ functionArn: fn.arn, payload, accessKeyId: ctx.accessKeyId });
          options.deliveries.deliver({
            target: fn.arn,
            event,
            handler: options.handlers.get(fn.arn),
            retries: fn.maximumRetryAttempts ?? 2,
            dlqArn: fn.onFailureArn ?? fn.deadLetterArn,
            deadLetter: (error, requestId, attempts) =>
              fn.onFailureArn
                ? {
                    body: JSON.stringify({
                      version: '1.0',
                      timestamp: new Date().toISOString(),
                      requestContext: {
                        requestId,
                        functionArn: `${fn.arn}:$LATEST`,
                        condition: 'RetriesExhausted',
                        approximateInvokeCount: attempts,
                      },
                      requestPayload: event,
                      responseContext: {
                        statusCode: 200,
                        executedVersion: '$LATEST',
                        functionError: 'Unhandled',
                      },
                      responsePayload: errorOf(error),
                    }),
                    attributes: {},
                  }
                : {
                    body: payload,
                    attributes: {
                      RequestID: stringAttribute(requestId),
                      ErrorCode: { DataType: 'Number', StringValue: '200' },
                      ErrorMessage: stringAttribute(
                        `Lambda process returned with error. Result: ${JSON.stringify(errorOf(error))}`.slice(
                          0,
                          1024,
                        ),
                      ),
                    },
                  },
          });
          // Lambda answers an asynchronous invocation with an empty body.
          return { status: 202, payload: '' };
        }
        const handler = options.handlers.get(fn.arn);
        try {
          const result = await handler?.(event, { requestId: randomUUID(), attempt: 1 });
          return { status: 200, payload: JSON.stringify(result ?? null) };
        } catch (error) {
          return {
            status: 200,
            headers: { 'x-amz-function-error': 'Unhandled' },
            payload: JSON.stringify(errorOf(error instanceof Error ? error : new Error(String(error)))),
          };
        }
      },
    },
  });
  return Object.assign(standin, {
    invocations,
    defineFunction(fn: LocalFunction) {
      const arn = `arn:aws:lambda:${options.region}:${options.accountId}:function:${fn.name}`;
      functions.set(fn.name, { ...fn, arn });
      options.handlers.define(arn, fn.handler);
      return arn;
    },
  });
}
