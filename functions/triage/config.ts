/**
 * Triage configuration from the environment, checked with zod (a bad value names its variable):
 * - `TRIAGE_MESSAGE_BUDGET`: most new envelopes per run (default 5000);
 * - `TRIAGE_PAGE_BUDGET`: most messages held in flight at once (default 10000, max 100000,
 *   below SQS's 120,000 in-flight limit);
 * - `TRIAGE_SAFETY_MARGIN_MS`: stop receiving with this much Lambda time left (default 15000);
 * - `ALARM_QUEUE_MAP`: JSON `{ "<alarm name or ARN>": ["<queue name>", ...] }` for alarms that
 *   carry no QueueName dimension (SEARCH expressions, case C02).
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
 */
import * as z from 'zod';
import { InvalidInputError } from '#platform/errors.js';
import { formatIssues } from '#platform/middleware.js';
import type { TriageConfig } from './triage.js';

const intFromEnv = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

const Env = z.object({
  TRIAGE_MESSAGE_BUDGET: intFromEnv(5000, 1, 1_000_000),
  TRIAGE_PAGE_BUDGET: intFromEnv(10_000, 10, 100_000),
  TRIAGE_SAFETY_MARGIN_MS: intFromEnv(15_000, 0, 600_000),
  ALARM_QUEUE_MAP: z
    .string()
    .default('{}')
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON' });
        return z.NEVER;
      }
    })
    .pipe(z.record(z.string(), z.array(z.string().min(1)))),
});

/**
 * Reads the triage configuration.
 * @throws InvalidInputError naming each bad variable.
 */
export function triageConfigFromEnv(env: Record<string, string | undefined> = process.env): TriageConfig {
  const result = Env.safeParse({
    TRIAGE_MESSAGE_BUDGET: env.TRIAGE_MESSAGE_BUDGET || undefined,
    TRIAGE_PAGE_BUDGET: env.TRIAGE_PAGE_BUDGET || undefined,
    TRIAGE_SAFETY_MARGIN_MS: env.TRIAGE_SAFETY_MARGIN_MS || undefined,
    ALARM_QUEUE_MAP: env.ALARM_QUEUE_MAP || undefined,
  });
  if (!result.success)
    throw new InvalidInputError('invalid triage configuration', formatIssues(result.error));
  const e = result.data;
  return {
    budgets: {
      messageBudget: e.TRIAGE_MESSAGE_BUDGET,
      pageBudget: e.TRIAGE_PAGE_BUDGET,
      safetyMarginMs: e.TRIAGE_SAFETY_MARGIN_MS,
    },
    alarmQueueMap: e.ALARM_QUEUE_MAP,
  };
}
