/**
 * The release of a finished inventory's held messages (inventory-session.ts `releaseHeld`) starts a
 * hold page only while the invocation has its safety margin plus the slowest page so far left: at
 * 100,000 held messages the SQS stand-in's pages slowed past the 15 s margin, a page begun with
 * just the margin left was cut by the deadline and the step failed `Redrive.Transient`
 * (docs/cost-model.md, "What stops a 100,000-message run"). A fake clock, fake ports, no network.
 */
import { describe, expect, it } from 'vitest';
import type { EnvelopeStore } from '#inventory/envelope-store.js';
import {
  type InventorySession,
  type InventorySessionStore,
  inventoryStep,
  newInventorySession,
} from '#inventory/inventory-session.js';
import type { QueueRegistration } from '#inventory/model.js';
import type { QueueInfo, SqsQueues } from '#platform/sqs-queues.js';

const DLQ = 'arn:aws:sqs:us-east-1:123456789012:orders-dlq';
const URL = 'http://sqs.local/123456789012/orders-dlq';
const PAGES = 6;

/** A RELEASING session with `PAGES` hold pages of 500 handles, its store, and a clock the ports move. */
function releasing(pageMs: (seq: number) => number, invocationMs: number) {
  let clock = 1_000_000;
  let deadline = clock + invocationMs;
  const pages = new Map<number, string[]>();
  for (let seq = 0; seq < PAGES; seq++)
    pages.set(
      seq,
      Array.from({ length: 500 }, (_, i) => `rh-${seq}-${i}`),
    );
  let stored: InventorySession = {
    ...newInventorySession({
      dlq: { arn: DLQ, url: URL, visible: 0, inFlight: PAGES * 500 },
      incidentId: 'inc-release',
      leaseOwner: 'alarm#1',
      now: clock,
      holdUntil: clock + 3_600_000,
      holdLimit: 110_000,
    }),
    status: 'RELEASING',
    inventoried: PAGES * 500,
    held: PAGES * 500,
    holdPages: PAGES,
  };
  const released: number[] = [];
  /** Pages whose release was still running when the invocation's deadline passed. */
  const cut: number[] = [];
  const sessions: InventorySessionStore = {
    get: async () => stored,
    create: async () => false,
    save: async (s) => {
      stored = { ...s, version: s.version + 1 };
      return stored;
    },
    putHoldPage: async () => undefined,
    holdPages: (_dlq, _id, fromSeq) => ({
      async *[Symbol.asyncIterator]() {
        for (const [seq, handles] of [...pages].sort(([a], [b]) => a - b))
          if (seq >= fromSeq) yield { seq, handles };
      },
    }),
    deleteHoldPage: async (_dlq, _id, seq) => {
      pages.delete(seq);
    },
  };
  const queues = {
    changeVisibility: async (_url: string, handles: readonly string[]) => {
      const seq = Number(handles[0]?.split('-')[1]);
      clock += pageMs(seq);
      if (clock > deadline) cut.push(seq);
      released.push(seq);
      return 0;
    },
  } as unknown as Pick<SqsQueues, 'receive' | 'changeVisibility' | 'describe'>;
  const step = () =>
    inventoryStep(
      {
        dlq: { arn: DLQ, url: URL, fifo: false } as QueueInfo,
        registration: {} as QueueRegistration,
        incidentId: 'inc-release',
        leaseOwner: 'alarm#1',
        budgets: { safetyMarginMs: 15_000 },
      },
      {
        queues,
        envelopes: {} as EnvelopeStore,
        sessions,
        remainingTimeMs: () => deadline - clock,
        now: () => clock,
      },
    );
  return {
    step,
    released,
    cut,
    session: () => stored,
    /** The next invocation: a fresh deadline. */
    nextInvocation: () => {
      deadline = clock + invocationMs;
    },
  };
}

describe('releasing held messages within the invocation', () => {
  it('stops before a page that the slowest page so far says would not end before the margin, and the next step goes on from it', async () => {
    // Pages slow down (the stand-in's last pages): 5, 20, 20, 20, 20, 20 s; 60 s per invocation.
    const run = releasing((seq) => (seq === 0 ? 5_000 : 20_000), 60_000);
    const first = await run.step();
    // 60 s: page 0 (5 s, 55 left), page 1 (20 s, 35 left), page 2 (35 >= 15 + 20: 20 s, 15 left),
    // then 15 < 35: stop and save. With the margin alone, page 3 would start at 15 s and be cut.
    expect([first.status, run.released, first.session.releasedPages]).toEqual(['running', [0, 1, 2], 3]);
    expect(first.session.held).toBe(1_500);
    run.nextInvocation();
    const second = await run.step();
    // 60 s: page 3 (40 left), page 4 (20 left), then stop.
    expect([second.status, run.released, second.session.releasedPages]).toEqual([
      'running',
      [0, 1, 2, 3, 4],
      5,
    ]);
    run.nextInvocation();
    const last = await run.step();
    expect([last.status, last.session.status, last.session.held]).toEqual(['complete', 'COMPLETE', 0]);
    expect(run.released).toEqual([0, 1, 2, 3, 4, 5]);
    // No page ran past an invocation's deadline.
    expect(run.cut).toEqual([]);
  });

  it('releases every page in one invocation when the pages are quick', async () => {
    const run = releasing(() => 200, 60_000);
    const result = await run.step();
    expect([result.status, run.released, run.cut]).toEqual(['complete', [0, 1, 2, 3, 4, 5], []]);
  });
});
