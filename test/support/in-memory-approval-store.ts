/**
 * An in-memory {@link ApprovalStore} with the same conditional semantics as the DynamoDB one
 * (`#approval/approval-store.js`), for unit tests of the cores; integration tests use DynamoDB Local.
 */
import type { ApprovalRecord, ApprovalStore, SlackThread } from '#approval/approval-store.js';
import { RecordNotFoundError } from '#platform/errors.js';

/** The fake; `records` exposes what it holds. */
export function createInMemoryApprovalStore(): ApprovalStore & { records: Map<string, ApprovalRecord> } {
  const records = new Map<string, ApprovalRecord>();
  const threads = new Map<string, SlackThread>();
  const copy = (r: ApprovalRecord | undefined) => (r ? structuredClone(r) : null);
  return {
    records,
    async create(record) {
      const existing = records.get(record.approvalId);
      if (existing) return { created: false, existing: structuredClone(existing) };
      records.set(record.approvalId, structuredClone(record));
      return { created: true };
    },
    async countPostAttempt(approvalId) {
      const r = records.get(approvalId);
      if (r) r.postAttempts += 1;
    },
    async get(approvalId) {
      return copy(records.get(approvalId));
    },
    async setMessage(approvalId, thread, requestMessage) {
      const r = records.get(approvalId);
      if (!r) throw new RecordNotFoundError(`approval ${approvalId}`);
      r.channel = thread.channel;
      r.messageTs = thread.ts;
      if (typeof requestMessage === 'string') r.requestMessage = requestMessage;
    },
    async claimDecision(approvalId, d) {
      const r = records.get(approvalId);
      if (r?.status !== 'PENDING') return { claimed: false, existing: copy(r) };
      Object.assign(r, {
        status: 'DECIDED',
        decision: d.decision,
        decidedBy: { ...d.by },
        decidedAt: d.at,
        reason: d.reason,
      });
      return { claimed: true, record: structuredClone(r) };
    },
    async claimCallback(approvalId, now, leaseUntil) {
      const r = records.get(approvalId);
      const free = r?.status === 'DECIDED' || (r?.status === 'SENDING' && (r.callbackLeaseUntil ?? 0) < now);
      if (!r || !free) return false;
      Object.assign(r, { status: 'SENDING', callbackLeaseUntil: leaseUntil });
      return true;
    },
    async releaseDecision(approvalId, by) {
      const r = records.get(approvalId);
      if (r && r.status === 'DECIDED' && r.decidedBy?.id === by.id) {
        Object.assign(r, { status: 'PENDING', decision: null, decidedBy: null, decidedAt: null });
      }
    },
    async close(approvalId, reason, at) {
      const r = records.get(approvalId);
      if (r && r.status !== 'CLOSED')
        Object.assign(r, { status: 'CLOSED', closedReason: reason, closedAt: at });
    },
    async putThread(incidentId, thread, _expiresAt, putOptions = {}) {
      const existing = threads.get(incidentId);
      if (existing && !putOptions.overwrite) return existing;
      threads.set(incidentId, thread);
      return thread;
    },
    async getThread(incidentId) {
      return threads.get(incidentId) ?? null;
    },
  };
}
