/**
 * Local glue between the alarm and the real triage handler: builds the EventBridge "CloudWatch
 * Alarm State Change" event the DLQ alarm would emit (from `events/cloudwatch/alarm-state-change.json`)
 * and invokes the real triage handler with the local workflow starter as its `startWorkflow` port.
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html
 */
import { readFileSync } from 'node:fs';
import type { WorkflowStarter } from '../../functions/shared/workflow-starter.js';
import { createTriageHandler } from '../../functions/triage/handler.js';
import type { TriageResult } from '../../functions/triage/triage.js';
import { lambdaContext } from '../lambda-context.js';

const SAMPLE_EVENT = new URL('../../events/cloudwatch/alarm-state-change.json', import.meta.url);

/** Options of {@link dlqAlarmEvent}. */
export interface DlqAlarmEventOptions {
  dlqName: string;
  /** @default '123456789012' */
  accountId?: string;
  /** @default 'us-east-1' */
  region?: string;
  /** State-change time; one incident per alarm transition. @default now */
  timestamp?: Date;
  /** Messages visible when the alarm fired (goes into the reason text). */
  visible?: number;
}

function cloudWatchTime(date: Date): string {
  return date.toISOString().replace('Z', '+0000');
}

/**
 * The ALARM transition of `<dlqName>-not-empty` (`ApproximateNumberOfMessagesVisible >= 1`), in
 * the EventBridge shape.
 */
export function dlqAlarmEvent(options: DlqAlarmEventOptions): Record<string, unknown> {
  const account = options.accountId ?? '123456789012';
  const region = options.region ?? process.env.AWS_REGION ?? 'us-east-1';
  const at = options.timestamp ?? new Date();
  const alarmName = `${options.dlqName}-not-empty`;
  const event = JSON.parse(readFileSync(SAMPLE_EVENT, 'utf8')) as {
    id: string;
    account: string;
    region: string;
    time: string;
    resources: string[];
    detail: {
      alarmName: string;
      state: { reason: string; reasonData: string; timestamp: string };
      configuration: { metrics: Array<{ metricStat: { metric: { dimensions: Record<string, string> } } }> };
    };
  };
  const visible = options.visible ?? 1;
  event.id = `local-${at.getTime()}`;
  event.account = account;
  event.region = region;
  event.time = `${at.toISOString().slice(0, 19)}Z`;
  event.resources = [`arn:aws:cloudwatch:${region}:${account}:alarm:${alarmName}`];
  event.detail.alarmName = alarmName;
  event.detail.state.timestamp = cloudWatchTime(at);
  event.detail.state.reason = `Threshold Crossed: 1 out of the last 1 datapoints [${visible}.0] was greater than or equal to the threshold (1.0).`;
  event.detail.state.reasonData = JSON.stringify({
    version: '1.0',
    recentDatapoints: [visible],
    threshold: 1,
  });
  const metric = event.detail.configuration.metrics[0];
  if (metric) metric.metricStat.metric.dimensions = { QueueName: options.dlqName };
  return event;
}

/**
 * Runs the real triage handler on `event`, starting workflows through `workflow`.
 *
 * @param timeoutMs - the triage function's timeout (its inventory budget), milliseconds.
 */
export async function runTriage(
  event: unknown,
  workflow: WorkflowStarter,
  timeoutMs = 300_000,
): Promise<TriageResult> {
  const handler = createTriageHandler({ workflow });
  return handler(event, lambdaContext({ functionName: 'TriageFunction', timeoutMs }));
}
