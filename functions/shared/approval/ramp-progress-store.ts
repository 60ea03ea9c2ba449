/**
 * The progress record of a run's Slack progress message, `INCIDENT#<incidentId>` /
 * `SLACK#PROGRESS#<executionName>`: the message's channel and `ts`, who may cancel (the queue
 * registration's approvers when the ramp started), the ramp steps, and when Slack was last called
 * (functions/move-task/slack-progress.ts writes it after every MoveTask action; slack-interaction reads it for a Cancel
 * click). TTL 30 days after the last update. No Slack Web API client here: the interaction
 * function bundles none.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html
 */

import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, type TableAccess } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import type { ExposureBasis } from '#platform/reasons.js';
import { recordFields, shapeOf } from '#platform/record-shapes.js';
import { keys } from '#platform/table.js';
import type { ProgressStep, RampProgressView } from './ramp-progress-message.js';

/** A step as stored: the view's step plus where its count started. */
export interface StoredStep extends ProgressStep {
  rateIndex: number;
  /** The ramp's moved total when the step started. */
  movedAtStart: number;
}

/** The progress record of one run. Times epoch milliseconds, `expiresAt` epoch seconds. */
export interface RampProgressRecord {
  incidentId: string;
  executionName: string;
  dlqArn: string;
  channel: string | null;
  /** `ts` of the progress message, once posted. */
  ts: string | null;
  /** Slack user ids who may cancel (the queue registration's approvers). */
  approvers: string[];
  steps: StoredStep[];
  plannedSteps: number;
  moved: number;
  toMove: number | null;
  decision: string;
  reason: string;
  /** The ramp's exposure bound so far and its basis (absent before the first gate). */
  exposure?: { bound: number; basis: ExposureBasis } | null;
  ended: boolean;
  /** When Slack was last called for this message (0: never). */
  slackAt: number;
  /** The message shows a cancel request. */
  cancelShown: boolean;
  expiresAt: number;
}

/** The progress-record store. */
export interface RampProgressStore {
  get(incidentId: string, executionName: string): Promise<RampProgressRecord | null>;
  put(record: RampProgressRecord): Promise<void>;
}

/** Creates the DynamoDB progress-record store. @param table - @default the configured table */
export function createRampProgressStore(table: Partial<TableAccess> = {}): RampProgressStore {
  const client = () => table.client ?? documentClient();
  const tableName = () => table.tableName ?? pipelineConfig().tableName;
  const key = (incidentId: string, executionName: string) => ({
    pk: keys.incident(incidentId),
    sk: keys.slackProgress(executionName),
  });
  return {
    async get(incidentId, executionName) {
      const out = await client().send(
        new GetCommand({ TableName: tableName(), Key: key(incidentId, executionName), ConsistentRead: true }),
      );
      if (!out.Item) return null;
      return recordFields<RampProgressRecord>(
        'slack-progress',
        out.Item,
        `Slack progress of ${executionName} (incident ${incidentId})`,
      );
    },
    async put(record) {
      await client().send(
        new PutCommand({
          TableName: tableName(),
          Item: { ...key(record.incidentId, record.executionName), ...shapeOf('slack-progress'), ...record },
        }),
      );
    },
  };
}

/** The view of a record (what the message shows). */
export function progressView(
  record: RampProgressRecord,
  cancel: RampProgressView['cancel'],
  nowMs: number,
): RampProgressView {
  return {
    incidentId: record.incidentId,
    executionName: record.executionName,
    dlqArn: record.dlqArn,
    steps: record.steps,
    plannedSteps: record.plannedSteps,
    moved: record.moved,
    toMove: record.toMove,
    decision: record.decision,
    reason: record.reason,
    exposure: record.exposure ?? null,
    ended: record.ended,
    cancel,
    canCancel: record.approvers.length > 0,
    nowMs,
  };
}
