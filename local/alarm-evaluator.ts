/**
 * The local stand-in for the CloudWatch alarm on a DLQ: reads the DLQ's
 * ApproximateNumberOfMessagesVisible and, when it is >= the threshold (1) and the last state was not
 * ALARM, emits the same EventBridge "CloudWatch Alarm State Change" event the real alarm would
 * (built from `events/cloudwatch/alarm-state-change.json`). When the DLQ drains it emits the
 * ALARM -> OK transition, which triage acknowledges and ignores.
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { sqsClient } from '#platform/clients.js';
import type { EventBridgeAlarmEvent } from '../functions/triage/alarm-event.js';

type AlarmState = 'ALARM' | 'OK' | 'INSUFFICIENT_DATA';

/** Options of {@link createAlarmEvaluator}. */
export interface AlarmEvaluatorOptions {
  /** The DLQ's URL (for GetQueueAttributes). */
  dlqUrl: string;
  /** The DLQ's name (the QueueName dimension). */
  queueName: string;
  /** @default `${queueName}-not-empty` */
  alarmName?: string;
  /** @default process.env.AWS_REGION ?? 'us-east-1' */
  region?: string;
  /** @default '123456789012' */
  accountId?: string;
  /** Messages visible at or above which the alarm is in ALARM. @default 1 */
  threshold?: number;
  /** State before the first evaluation. @default 'INSUFFICIENT_DATA' (how CloudWatch creates alarms) */
  initialState?: AlarmState;
  client?: SQSClient;
  /** @default () => new Date() */
  now?: () => Date;
}

/** A running evaluator. */
export interface AlarmEvaluator {
  /** Evaluates once; returns the event emitted on a state change, or null when the state holds. */
  evaluate(): Promise<EventBridgeAlarmEvent | null>;
  /** Current state. */
  readonly state: AlarmState;
  /** Evaluates every `periodMs` (default 60 000, CloudWatch's period) and calls `onEvent` per transition. */
  start(onEvent: (event: EventBridgeAlarmEvent) => unknown, periodMs?: number): () => void;
}

const TEMPLATE = new URL('../events/cloudwatch/alarm-state-change.json', import.meta.url);

/** CloudWatch's state timestamp format: `2026-01-02T10:35:00.000+0000`. */
export function cloudWatchTimestamp(date: Date): string {
  return date.toISOString().replace('Z', '+0000');
}

/** Creates an evaluator for one DLQ. */
export function createAlarmEvaluator(options: AlarmEvaluatorOptions): AlarmEvaluator {
  const region = options.region ?? process.env.AWS_REGION ?? 'us-east-1';
  const account = options.accountId ?? '123456789012';
  const alarmName = options.alarmName ?? `${options.queueName}-not-empty`;
  const threshold = options.threshold ?? 1;
  const now = options.now ?? (() => new Date());
  let state: AlarmState = options.initialState ?? 'INSUFFICIENT_DATA';
  let stateSince = now();

  const build = (next: AlarmState, visible: number): EventBridgeAlarmEvent => {
    const event = JSON.parse(readFileSync(TEMPLATE, 'utf8')) as EventBridgeAlarmEvent & {
      id: string;
      time: string;
      region: string;
      detail: Record<string, unknown>;
    };
    const at = now();
    const alarmArn = `arn:aws:cloudwatch:${region}:${account}:alarm:${alarmName}`;
    const verb = next === 'ALARM' ? 'was greater than or equal to' : 'was not greater than or equal to';
    event.id = randomUUID();
    event.account = account;
    event.region = region;
    event.time = `${at.toISOString().slice(0, 19)}Z`;
    event.resources = [alarmArn];
    event.detail.alarmName = alarmName;
    (event.detail as Record<string, unknown>).state = {
      value: next,
      reason: `Threshold Crossed: 1 out of the last 1 datapoints [${visible}.0] ${verb} the threshold (${threshold}.0).`,
      reasonData: JSON.stringify({ version: '1.0', recentDatapoints: [visible], threshold }),
      timestamp: cloudWatchTimestamp(at),
    };
    event.detail.previousState = {
      value: state,
      reason: 'previous evaluation',
      timestamp: cloudWatchTimestamp(stateSince),
    };
    const configuration = event.detail.configuration as {
      metrics: Array<{ metricStat?: { metric: { dimensions?: Record<string, string> } } }>;
    };
    for (const metric of configuration.metrics) {
      if (metric.metricStat) metric.metricStat.metric.dimensions = { QueueName: options.queueName };
    }
    stateSince = at;
    state = next;
    return event;
  };

  const evaluator: AlarmEvaluator = {
    get state() {
      return state;
    },
    async evaluate() {
      const client = options.client ?? sqsClient();
      const out = await client.send(
        new GetQueueAttributesCommand({
          QueueUrl: options.dlqUrl,
          AttributeNames: ['ApproximateNumberOfMessages'],
        }),
      );
      const visible = Number(out.Attributes?.ApproximateNumberOfMessages ?? 0);
      if (visible >= threshold && state !== 'ALARM') return build('ALARM', visible);
      if (visible < threshold && state === 'ALARM') return build('OK', visible);
      if (visible < threshold && state === 'INSUFFICIENT_DATA') {
        // A first datapoint below the threshold: CloudWatch moves to OK (and emits it too).
        return build('OK', visible);
      }
      return null;
    },
    start(onEvent, periodMs = 60_000) {
      let stopped = false;
      const tick = async () => {
        if (stopped) return;
        const event = await evaluator.evaluate().catch(() => null);
        if (event) await onEvent(event);
      };
      const timer = setInterval(() => void tick(), periodMs);
      void tick();
      return () => {
        stopped = true;
        clearInterval(timer);
      };
    },
  };
  return evaluator;
}
