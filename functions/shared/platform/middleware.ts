/**
 * The shared middy stack every handler uses: structured logging (Powertools Logger) and one place
 * that maps errors to the {@link RedriveError} hierarchy, so Step Functions sees stable error names
 * (`Redrive.InvalidInput`, `Redrive.Transient`, ...) and callers see which field was wrong.
 *
 * @example
 * ```ts
 * export const handler = middy()
 *   .use(standardMiddleware())
 *   .use(parser({ schema: PreflightInput }))
 *   .handler((input) => preflight(input, deps()));
 * ```
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { ParseError } from '@aws-lambda-powertools/parser';
import type { MiddlewareObj } from '@middy/core';
import { invocationDeadline } from './deadline.js';
import { InvalidInputError, RedriveError, toRedriveError } from './errors.js';
import * as z from './zod.js';

/** The pipeline's logger (JSON lines; `POWERTOOLS_LOG_LEVEL` sets the level). */
export const logger = new Logger({ serviceName: 'dlq-redrive' });

/**
 * Turns zod issues into one line per problem, each naming its field, e.g.
 * `dlqArn: is required`, `maxRate: must be an integer 1..500, got "fifty"`.
 */
export function formatIssues(error: z.$ZodError | readonly SchemaIssue[]): string[] {
  const issues = error instanceof z.$ZodError ? error.issues : error;
  return issues.map((issue) => {
    const path = (issue.path ?? []).map((p) =>
      typeof p === 'object' && p !== null ? String(p.key) : String(p),
    );
    return `${path.length > 0 ? path.join('.') : '(root)'}: ${issue.message}`;
  });
}

/** A Standard Schema issue, as zod and the Powertools parser report them. */
export interface SchemaIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/**
 * Parses `input` with `schema`, or throws {@link InvalidInputError} listing every problem.
 * Pure: call it before any side effect.
 *
 * @param what - what is being parsed, for the message ("execution input", "alarm event").
 * @throws InvalidInputError when the input does not match.
 */
export function parseOrThrow<S extends z.ZodMiniType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success)
    throw new InvalidInputError(`invalid ${what}`, formatIssues(result.error), result.error);
  return result.data;
}

function mapError(error: unknown): RedriveError {
  if (error instanceof RedriveError) return error;
  if (error instanceof z.$ZodError) return new InvalidInputError('invalid input', formatIssues(error), error);
  if (error instanceof ParseError) {
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof z.$ZodError || Array.isArray(cause)) {
      return new InvalidInputError('invalid input', formatIssues(cause as SchemaIssue[]), error);
    }
    return new InvalidInputError(error.message, [], error);
  }
  return toRedriveError(error);
}

/** Error mapping as a middy middleware (runs after every other `onError`). */
export function errorMapper(): MiddlewareObj {
  return {
    onError: (request) => {
      const mapped = mapError(request.error);
      logger.error(mapped.message, {
        errorName: mapped.name,
        code: mapped.code,
        details: [...mapped.details],
      });
      request.error = mapped;
    },
  };
}

/**
 * Logger context injection, the invocation's deadline for every outgoing call (deadline.ts) and
 * error mapping: the first `.use()` of every handler.
 */
export function standardMiddleware(): MiddlewareObj[] {
  return [
    injectLambdaContext(logger, { resetKeys: true }),
    invocationDeadline() as MiddlewareObj,
    errorMapper(),
  ];
}
