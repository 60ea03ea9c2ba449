/**
 * The ramp's Slack progress message: within Block Kit's limits whatever the run does, and within
 * Slack's rate limits whatever the gate's cadence (chat.update is Tier 3, about 50 a minute per
 * workspace; chat.postMessage about 1 a second per channel). The real Slack port talks to the
 * local capture server; the clock is simulated, so rates are exact and the test is not timed.
 *
 * @see https://api.slack.com/methods/chat.update
 * @see https://api.slack.com/reference/block-kit/blocks
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CANCEL_ACTION_ID,
  MAX_BUTTON_VALUE_CHARS,
  parseCancelValue,
  rampProgressMessage,
} from '#approval/ramp-progress-message.js';
import type { RampProgressRecord, RampProgressStore } from '#approval/ramp-progress-store.js';
import { createSlackApi, type SlackMessage } from '#approval/slack-client.js';
import type { CancelRequest } from '#incident/cancel-requests.js';
import {
  createRampProgressReporter,
  MIN_UPDATE_INTERVAL_MS,
  type RampMeasurement,
  ROUTINE_UPDATE_INTERVAL_MS,
} from '../../functions/move-task/slack-progress.js';
import { type SlackCapture, startSlackCapture } from '../support/slack-capture.js';

const START = 1_767_350_400_000; // 2026-01-02T10:40:00Z
const INCIDENT = 'inc-0123456789abcdef01234567';
const EXECUTION = 'inc-0123456789abcdef01234567-cli1-0a1b2c3d';
const DLQ = 'arn:aws:sqs:us-east-1:111122223333:orders-dlq';
const THREAD = { channel: 'C0OPS', ts: '1767350100.000042' };

type Block = { type: string; text?: { text: string }; elements?: Array<Record<string, unknown>> };

/** Every text of a message with the limit Slack applies to it. */
function limitsOf(message: SlackMessage): Array<[string, number, number]> {
  const out: Array<[string, number, number]> = [['text', message.text.length, 3000]];
  for (const block of (message.blocks ?? []) as Block[]) {
    if (block.text) out.push([block.type, block.text.text.length, block.type === 'header' ? 150 : 3000]);
    for (const element of block.elements ?? []) {
      if (typeof element.text === 'string') out.push([`${block.type}-element`, element.text.length, 3000]);
      if (typeof element.value === 'string')
        out.push(['button value', element.value.length, MAX_BUTTON_VALUE_CHARS]);
      const label = element.text as { text?: string } | undefined;
      if (label && typeof label.text === 'string') out.push(['button label', label.text.length, 75]);
    }
  }
  return out;
}

const memoryStore = (): RampProgressStore & { records: Map<string, RampProgressRecord> } => {
  const records = new Map<string, RampProgressRecord>();
  return {
    records,
    get: async (i, e) => structuredClone(records.get(`${i} ${e}`) ?? null),
    put: async (r) => void records.set(`${r.incidentId} ${r.executionName}`, structuredClone(r)),
  };
};

describe('progress message within Block Kit limits', () => {
  it('ten ramp steps, a 20,000-character markup-heavy gate sentence, a long queue name and a cancel by a long username: every text within its limit, at most 6 blocks', () => {
    const steps = Array.from({ length: 10 }, (_, i) => ({
      rate: 50 * (i + 1),
      moved: 1_000_000 + i,
      reinflow: i,
      excess: 3 * i,
      startedAt: START + i * 60_000,
      updatedAt: START + i * 60_000 + 30_000,
    }));
    const view = {
      incidentId: INCIDENT,
      executionName: 'x'.repeat(80),
      dlqArn: `arn:aws:sqs:us-east-1:111122223333:${'d'.repeat(80)}`,
      steps,
      plannedSteps: 10,
      moved: 10_000_045,
      toMove: 12_000_000,
      decision: 'hold',
      reason: '<&>'.repeat(7000),
      exposure: null,
      ended: false,
      canCancel: true,
      nowMs: START + 3_600_000,
    };
    for (const message of [
      rampProgressMessage({ ...view, cancel: null }),
      rampProgressMessage({ ...view, cancel: { by: '<'.repeat(256), via: 'slack', at: START } }),
      rampProgressMessage({ ...view, cancel: null, ended: true, decision: 'halt' }),
    ]) {
      for (const [what, length, max] of limitsOf(message)) expect(length, what).toBeLessThanOrEqual(max);
      expect((message.blocks ?? []).length).toBeLessThanOrEqual(6);
      expect(JSON.stringify(message).length).toBeLessThan(16_000);
    }
    const withButton = rampProgressMessage({ ...view, cancel: null });
    const button = (withButton.blocks as Block[]).find((b) => b.type === 'actions')?.elements?.[0];
    expect(button?.action_id).toBe(CANCEL_ACTION_ID);
    expect(parseCancelValue(String(button?.value))).toEqual({
      incidentId: INCIDENT,
      executionName: 'x'.repeat(80),
    });
    expect(JSON.stringify(withButton.blocks)).toContain('step 10/10: *500 msg/s* · moved 1000009');
  });

  it('no Cancel button once the ramp ended, once a cancel is requested, or when the queue has no Slack approvers', () => {
    const base = {
      incidentId: INCIDENT,
      executionName: EXECUTION,
      dlqArn: DLQ,
      steps: [],
      plannedSteps: 3,
      moved: 0,
      toMove: null,
      decision: 'hold',
      reason: '',
      exposure: null,
      ended: false,
      cancel: null,
      canCancel: true,
      nowMs: START,
    };
    const actions = (m: SlackMessage) => (m.blocks as Block[]).filter((b) => b.type === 'actions').length;
    expect(actions(rampProgressMessage(base))).toBe(1);
    expect(actions(rampProgressMessage({ ...base, ended: true }))).toBe(0);
    expect(actions(rampProgressMessage({ ...base, canCancel: false }))).toBe(0);
    const cancelled = rampProgressMessage({ ...base, cancel: { by: 'dave', via: 'slack', at: START } });
    expect(actions(cancelled)).toBe(0);
    expect(JSON.stringify(cancelled.blocks)).toContain(
      'Cancel requested by dave (slack) at 2026-01-02T10:40:00Z',
    );
  });
});

describe('progress updates within Slack rate limits', () => {
  let capture: SlackCapture;
  beforeAll(async () => {
    capture = await startSlackCapture();
  });
  afterAll(async () => {
    await capture?.close();
  });

  /** A reporter on a simulated clock; every Slack call's time is recorded. */
  function reporter(cancel: () => CancelRequest | null = () => null) {
    let clock = START;
    const calls: Array<{ at: number; method: string; message: SlackMessage }> = [];
    const slack = createSlackApi({ token: 'xoxb-test', slackApiUrl: capture.apiUrl });
    const store = memoryStore();
    const progress = createRampProgressReporter({
      slack: {
        postMessage: async (channel, message, options) => {
          calls.push({ at: clock, method: 'chat.postMessage', message });
          return slack.postMessage(channel, message, options);
        },
        updateMessage: async (channel, ts, message) => {
          calls.push({ at: clock, method: 'chat.update', message });
          return slack.updateMessage(channel, ts, message);
        },
      },
      store,
      threads: { getThread: async () => THREAD, putThread: async (_i, t) => t },
      cancelRequests: { get: async () => cancel() },
      registrationFor: async () => ({ approvers: ['U0APPROVER'], slackChannel: 'C0OTHER' }),
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
    });
    return {
      calls,
      store,
      advance: (ms: number) => {
        clock += ms;
      },
      report: (ramp: RampMeasurement) =>
        progress.report({
          incidentId: INCIDENT,
          executionName: EXECUTION,
          dlqArn: DLQ,
          plannedSteps: 3,
          ramp,
        }),
    };
  }

  const measurement = (over: Partial<RampMeasurement>): RampMeasurement => ({
    decision: 'hold',
    rateIndex: 0,
    rate: 5,
    movedBefore: 0,
    moved: 0,
    baseline: 20_000,
    reinflow: 0,
    excess: 0,
    reason: 'healthy',
    ...over,
  });

  it('a 2-hour ramp checked every 2 s (3,600 gate checks) posts once, then updates at most 4 times in any minute, never twice within 1.2 s, and shows each step and the end', async () => {
    const r = reporter();
    const rates = [5, 50, 200];
    let moved = 0;
    for (let check = 0; check < 3600; check++) {
      const rateIndex = check < 600 ? 0 : check < 1200 ? 1 : 2;
      const rate = rates[rateIndex] as number;
      const last = check === 3599;
      await r.report(
        measurement({
          decision: last ? 'done' : check === 599 || check === 1199 ? 'step-up' : 'hold',
          rateIndex,
          rate,
          movedBefore: moved,
          reason: last ? 'everything moved; no re-inflow in the return window' : `check ${check}`,
        }),
      );
      moved = Math.min(20_000, moved + rate);
      r.advance(2000);
    }
    const times = r.calls.map((c) => c.at);
    expect(r.calls[0]?.method).toBe('chat.postMessage');
    expect(r.calls.slice(1).every((c) => c.method === 'chat.update')).toBe(true);
    expect(capture.callsTo('chat.postMessage').at(-1)?.args.thread_ts).toBe(THREAD.ts);
    for (let i = 1; i < times.length; i++)
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(MIN_UPDATE_INTERVAL_MS);
    for (const t of times)
      expect(times.filter((u) => u >= t && u < t + 60_000).length).toBeLessThanOrEqual(4);
    // 7,200 s at one routine update per 30 s, plus the post, 2 step-ups and the end.
    expect(times.length).toBeLessThanOrEqual(7_200_000 / ROUTINE_UPDATE_INTERVAL_MS + 4);
    expect(times.length).toBeGreaterThan(100);
    const final = r.calls.at(-1)?.message as SlackMessage;
    const text = JSON.stringify(final.blocks);
    expect(text).toContain('ramp ended: *done*');
    expect(text).toContain('step 3/3: *200 msg/s*');
    expect(text).not.toContain(CANCEL_ACTION_ID);
    const stored = [...r.store.records.values()][0];
    expect(stored?.steps.map((s) => [s.rate, s.moved])).toEqual([
      [5, 3000],
      [50, 17_000],
      [200, 0],
    ]);
  });

  it('a cancel request is shown at the next report, at once, without the button', async () => {
    let request: CancelRequest | null = null;
    const r = reporter(() => request);
    await r.report(measurement({ movedBefore: 10 }));
    r.advance(5000);
    await r.report(measurement({ movedBefore: 20 }));
    expect(r.calls).toHaveLength(1); // routine, within 30 s: skipped
    request = {
      incidentId: INCIDENT,
      executionName: EXECUTION,
      by: 'dave',
      via: 'slack',
      at: START + 5000,
      reason: null,
    };
    r.advance(2000);
    await r.report(measurement({ movedBefore: 25 }));
    expect(r.calls).toHaveLength(2);
    const shown = JSON.stringify(r.calls[1]?.message.blocks);
    expect(shown).toContain('Cancel requested by dave (slack)');
    expect(shown).not.toContain(CANCEL_ACTION_ID);
    expect(shown).toContain('moved *25* of 20000');
  });
});
