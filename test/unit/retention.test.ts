import { describe, expect, it } from 'vitest';
import { expiresWithin, retentionDeadline } from '#inventory/retention.js';

// Numbers from case C10 (retention deadline, standard vs FIFO).
const c10 = {
  input: {
    now_epoch_ms: 1767350400000,
    standard: {
      MessageRetentionPeriod: '345600',
      message: {
        Attributes: {
          ApproximateFirstReceiveTimestamp: '1767340000000',
          ApproximateReceiveCount: '6',
          SentTimestamp: '1767087600000',
        } as Record<string, string>,
      },
    },
    fifo: {
      MessageRetentionPeriod: '345600',
      movedToDlqApprox_ms: 1767346800000,
      message: {
        Attributes: {
          ApproximateFirstReceiveTimestamp: '1767340000000',
          ApproximateReceiveCount: '6',
          SentTimestamp: '1767091200000',
          MessageGroupId: 'g1',
        } as Record<string, string>,
      },
    },
  },
};
const HOUR = 3_600_000;
const { now_epoch_ms: now, standard, fifo } = c10.input;

describe('retention deadline', () => {
  it('C10 standard DLQ: SentTimestamp + retention period = now + 23 h, flagged as expiring within 24 h', () => {
    const d = retentionDeadline({
      fifo: false,
      retentionPeriodSeconds: Number(standard.MessageRetentionPeriod),
      systemAttributes: standard.message.Attributes,
      now,
    });
    expect(d).toEqual({ deadline: now + 23 * HOUR, approximate: false });
    expect(expiresWithin(d.deadline, now)).toBe(true);
  });

  it('C10 FIFO DLQ: the clock restarts on entry, about now + 95 h, marked approximate', () => {
    const d = retentionDeadline({
      fifo: true,
      retentionPeriodSeconds: Number(fifo.MessageRetentionPeriod),
      systemAttributes: fifo.message.Attributes,
      enteredDlqAt: fifo.movedToDlqApprox_ms,
      now,
    });
    expect(d).toEqual({ deadline: now + 95 * HOUR, approximate: true });
    expect(expiresWithin(d.deadline, now)).toBe(false);
  });

  it('C10 FIFO DLQ without entry evidence errs early: from ApproximateFirstReceiveTimestamp, never from SentTimestamp', () => {
    const d = retentionDeadline({
      fifo: true,
      retentionPeriodSeconds: Number(fifo.MessageRetentionPeriod),
      systemAttributes: fifo.message.Attributes,
      now,
    });
    expect(d.deadline).toBe(Number(fifo.message.Attributes.ApproximateFirstReceiveTimestamp) + 345_600_000);
    expect(d.deadline).toBeLessThan(now + 95 * HOUR);
    expect(d.deadline).toBeGreaterThan(now + 90 * HOUR);
    expect(d.approximate).toBe(true);
  });
});
