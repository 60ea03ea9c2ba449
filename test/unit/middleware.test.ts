import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { InvalidInputError, RedriveError } from '#platform/errors.js';
import { parseOrThrow, standardMiddleware } from '#platform/middleware.js';

const Input = z.object({ dlqArn: z.string().startsWith('arn:'), maxRate: z.number().int().max(500) });
const context = { functionName: 'test', awsRequestId: 'req-1' } as unknown as Context;

describe('standard middleware', () => {
  it('turns a schema failure into Redrive.InvalidInput naming every bad field, before the core runs', async () => {
    let coreCalls = 0;
    const handler = middy()
      .use(standardMiddleware())
      .use(parser({ schema: Input }))
      .handler(async () => {
        coreCalls += 1;
        return 'ran';
      });
    const badInput = { dlqArn: 'https://sqs', maxRate: 'fifty' } as unknown as z.infer<typeof Input>;
    const error = await handler(badInput, context).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).name).toBe('Redrive.InvalidInput');
    expect((error as InvalidInputError).details.map((d) => d.split(':')[0])).toEqual(['dlqArn', 'maxRate']);
    expect(coreCalls).toBe(0);
  });

  it('wraps an unknown throw as a non-retryable RedriveError', async () => {
    const handler = middy()
      .use(standardMiddleware())
      .handler(async () => {
        throw new TypeError('boom');
      });
    const error = (await handler({}, context).catch((e: unknown) => e)) as RedriveError;
    expect(error).toBeInstanceOf(RedriveError);
    expect([error.code, error.retryable, error.message]).toEqual(['INTERNAL', false, 'boom']);
  });
});

describe('parseOrThrow', () => {
  it('returns the parsed value when the input matches', () => {
    expect(parseOrThrow(Input, { dlqArn: 'arn:x', maxRate: 5 }, 'input')).toEqual({
      dlqArn: 'arn:x',
      maxRate: 5,
    });
  });
});
