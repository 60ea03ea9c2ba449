/**
 * The first event each function gets in the cold-start benchmark: the shape its state or trigger
 * sends (samples from events/ where there is one), valid for its parser, so the handler runs to its
 * first AWS or Slack call.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FunctionName } from '@dlq-redrive/cdk/function-catalog';
import { REPO_ROOT } from '../../infra/bundling.js';

const sample = (path: string): unknown => JSON.parse(readFileSync(join(REPO_ROOT, 'events', path), 'utf8'));

const DLQ_ARN = 'arn:aws:sqs:us-east-1:111122223333:orders-dlq';
const plan = {
  incidentId: 'inc-bench',
  dlqArn: DLQ_ARN,
  dlqUrl: 'https://sqs.us-east-1.amazonaws.com/111122223333/orders-dlq',
  mode: 'redrive',
  destinationArn: null,
  allowCustomDestinationForSharedDlq: false,
  sampleSize: 2,
  rampRates: [5, 50],
  dwellSeconds: 60,
  verifyMarginSeconds: 30,
  discardPoison: false,
  preApproved: false,
  approvedBy: null,
  requestedBy: 'bench',
  parkingQueueUrl: null,
  maxRedrives: 3,
  inventoryId: null,
  historyEventLimit: 25_000,
  continuation: 0,
};
const preflight = {
  ok: true,
  dlqDepth: 10,
  sourceArns: ['arn:aws:sqs:us-east-1:111122223333:orders'],
  verifyWindowSeconds: 60,
  fifo: false,
  selection: { selected: 10 },
};
const slot = null;

/** The event of each function's first invocation. */
export const FIRST_EVENTS: Readonly<Record<FunctionName, unknown>> = {
  triage: sample('cloudwatch/alarm-state-change.json'),
  'validate-input': sample('console/minimal.json'),
  preflight: { plan, executionName: 'bench' },
  'request-approval': { plan, preflight, taskToken: 'bench-token' },
  park: { plan },
  'sample-redrive': { plan, preflight },
  'verify-sample': {
    plan,
    sample: { redriveId: 'inc-bench', sent: 2, alreadySent: 0, keys: ['k1', 'k2'], verifyAfterSeconds: 0 },
  },
  'continue-inventory': { plan, executionName: 'bench' },
  'move-task': { action: 'start', plan, preflight, executionName: 'bench' },
  reconcile: { plan, outcome: 'completed' },
  notify: {
    outcome: 'completed',
    executionName: 'bench',
    run: {
      input: null,
      plan,
      preflight: slot,
      recheck: slot,
      approval: slot,
      park: slot,
      sample: slot,
      verify: slot,
    },
  },
  'slack-interaction': sample('slack/function-url-block-actions.json'),
  'execution-ended': sample('stepfunctions/execution-status-change-aborted.json'),
  mover: { action: 'sample', plan, preflight, executionName: 'bench' },
  'approval-reminder': sample('eventbridge/scheduled-event.json'),
};
