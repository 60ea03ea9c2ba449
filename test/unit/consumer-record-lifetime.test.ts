import { DEFAULT_REDRIVE_WINDOW_SECONDS } from '@dlq-redrive/consumer-idempotency';
import { describe, expect, it } from 'vitest';
import { leaseSeconds } from '#incident/workflow-lease.js';

describe("the consumer package's default record lifetime", () => {
  it("outlasts the pipeline's longest run (its workflow lease) for a verification window of up to 23 hours", () => {
    // The record of a message processed just before it dead-lettered must still exist when the
    // last move of a redrive that starts at the end of the DLQ's retention delivers its copy.
    expect(DEFAULT_REDRIVE_WINDOW_SECONDS).toBeGreaterThanOrEqual(leaseSeconds(23 * 3600));
  });
});
