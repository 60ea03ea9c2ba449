/**
 * A PENDING approval record for Slack tests: the fields every test sets the same way (no decision,
 * not closed, one post attempt) plus the ones each test names.
 */
import type { ApprovalRecord } from '#approval/approval-store.js';

type Given = Pick<
  ApprovalRecord,
  | 'approvalId'
  | 'taskToken'
  | 'incidentId'
  | 'dlqArn'
  | 'channel'
  | 'messageTs'
  | 'approvers'
  | 'createdAt'
  | 'expiresAt'
>;

export function pendingApprovalRecord(given: Given, overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    ...given,
    status: 'PENDING',
    decision: null,
    decidedBy: null,
    decidedAt: null,
    reason: null,
    closedReason: null,
    closedAt: null,
    postAttempts: 1,
    ...overrides,
  };
}
