/**
 * Local EventBridge stand-in: event buses, rules with targets, and PutEvents on the wire protocol
 * the SDK v3 client (3.1164.0) speaks, awsJson 1.1 (target `AWSEvents`).
 *
 * Operations: CreateEventBus, PutRule (`EventPattern` matching on `source` and `detail-type`
 * lists), PutTargets (`Arn` of a local function or endpoint, `DeadLetterConfig.Arn`,
 * `RetryPolicy.MaximumRetryAttempts`), PutEvents. A put event is delivered to the targets of every
 * matching rule on its bus after the call returns; a target's local handler that throws fails the
 * delivery, and after the retries (the policy's, at most 3 locally) the event goes to the target's
 * DLQ as EventBridge sends it: the event JSON as body with `RULE_ARN`, `TARGET_ARN`, `ERROR_CODE`,
 * `ERROR_MESSAGE`, `EXHAUSTED_RETRY_CONDITION` and `RETRY_ATTEMPTS`. PutEvents refuses a `Source`
 * starting with `aws.` (`NotAuthorizedForSourceException`), as EventBridge does for accounts.
 *
 * Not EventBridge: only `source` and `detail-type` patterns, no input transformers, no archives.
 *
 * @see https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEvents.html
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html
 */
import { randomUUID } from 'node:crypto';
import { type Deliveries, type LocalHandlers, stringAttribute } from './delivery.js';
import { awsJsonProtocol, requireString, type Standin, StandinError, startStandin } from './server.js';

/** One event put, as recorded (with the EventId it got). */
export interface PutEvent {
  eventId: string;
  eventBusArn: string;
  event: Record<string, unknown>;
  accessKeyId: string;
}

interface Rule {
  arn: string;
  busArn: string;
  sources: string[] | undefined;
  detailTypes: string[] | undefined;
  targets: Array<{ id: string; arn: string; dlqArn?: string; retries: number }>;
}

/** The running stand-in. */
export interface EventBridgeStandin extends Standin {
  readonly events: PutEvent[];
  /**
   * Puts an event an AWS service sends (e.g. CloudWatch's alarm state changes) on the default bus
   * and delivers it to the matching rules' targets, as a PutEvents entry would be.
   */
  putServiceEvent(event: Record<string, unknown>): void;
}

/** Starts the EventBridge stand-in. */
export async function startEventBridgeStandin(options: {
  region: string;
  accountId: string;
  handlers: LocalHandlers;
  deliveries: Deliveries;
}): Promise<EventBridgeStandin> {
  const prefix = `arn:aws:events:${options.region}:${options.accountId}`;
  const buses = new Set<string>([`${prefix}:event-bus/default`]);
  const rules = new Map<string, Rule>();
  const events: PutEvent[] = [];
  const busArn = (nameOrArn: unknown) => {
    const name = typeof nameOrArn === 'string' && nameOrArn !== '' ? nameOrArn : 'default';
    const arn = name.startsWith('arn:') ? name : `${prefix}:event-bus/${name}`;
    if (!buses.has(arn))
      throw new StandinError('ResourceNotFoundException', `Event bus ${name} does not exist.`);
    return arn;
  };
  const ruleArn = (bus: string, name: string) => {
    const busName = bus.split('event-bus/')[1];
    return busName === 'default' ? `${prefix}:rule/${name}` : `${prefix}:rule/${busName}/${name}`;
  };

  const publish = (event: Record<string, unknown>, bus: string, accessKeyId: string) => {
    events.push({ eventId: event.id as string, eventBusArn: bus, event, accessKeyId });
    for (const rule of rules.values()) {
      if (rule.busArn !== bus) continue;
      if (rule.sources && !rule.sources.includes(event.source as string)) continue;
      if (rule.detailTypes && !rule.detailTypes.includes(event['detail-type'] as string)) continue;
      for (const target of rule.targets)
        options.deliveries.deliver({
          target: target.arn,
          event,
          handler: options.handlers.get(target.arn),
          retries: target.retries,
          dlqArn: target.dlqArn,
          deadLetter: (error, _requestId, attempts) => ({
            body: JSON.stringify(event),
            attributes: {
              RULE_ARN: stringAttribute(rule.arn),
              TARGET_ARN: stringAttribute(target.arn),
              ERROR_CODE: stringAttribute((error as { code?: string }).code ?? 'SDK_CLIENT_ERROR'),
              ERROR_MESSAGE: stringAttribute(error.message.slice(0, 1024)),
              EXHAUSTED_RETRY_CONDITION: stringAttribute('MaximumRetryAttempts'),
              RETRY_ATTEMPTS: stringAttribute(String(attempts - 1)),
            },
          }),
        });
    }
  };

  const standin = await startStandin({
    service: 'EventBridge',
    protocol: awsJsonProtocol({
      version: '1.1',
      targetPrefix: 'AWSEvents',
      namespace: 'com.amazonaws.eventbridge',
    }),
    operations: {
      CreateEventBus(input) {
        const arn = `${prefix}:event-bus/${requireString(input, 'Name')}`;
        buses.add(arn);
        return { EventBusArn: arn };
      },
      PutRule(input) {
        const bus = busArn(input.EventBusName);
        const arn = ruleArn(bus, requireString(input, 'Name'));
        const pattern = JSON.parse(String(input.EventPattern ?? '{}')) as Record<
          string,
          string[] | undefined
        >;
        rules.set(arn, {
          arn,
          busArn: bus,
          sources: pattern.source,
          detailTypes: pattern['detail-type'],
          targets: rules.get(arn)?.targets ?? [],
        });
        return { RuleArn: arn };
      },
      PutTargets(input) {
        const rule = rules.get(ruleArn(busArn(input.EventBusName), requireString(input, 'Rule')));
        if (!rule)
          throw new StandinError('ResourceNotFoundException', `Rule ${String(input.Rule)} does not exist.`);
        for (const t of (input.Targets ?? []) as Array<Record<string, unknown>>) {
          const dlqArn = (t.DeadLetterConfig as { Arn?: string } | undefined)?.Arn;
          const retries = Number(
            (t.RetryPolicy as { MaximumRetryAttempts?: number } | undefined)?.MaximumRetryAttempts ?? 3,
          );
          rule.targets = rule.targets.filter((x) => x.id !== t.Id);
          rule.targets.push({
            id: String(t.Id),
            arn: String(t.Arn),
            retries: Math.min(retries, 3),
            ...(dlqArn ? { dlqArn } : {}),
          });
        }
        return { FailedEntryCount: 0, FailedEntries: [] };
      },
      PutEvents(input, ctx) {
        const entries = (input.Entries ?? []) as Array<Record<string, unknown>>;
        if (entries.length === 0 || entries.length > 10)
          throw new StandinError('ValidationException', 'Entries must hold 1 to 10 entries');
        let failed = 0;
        const out = entries.map((entry) => {
          const source = String(entry.Source ?? '');
          if (source.startsWith('aws.')) {
            failed += 1;
            return {
              ErrorCode: 'NotAuthorizedForSourceException',
              ErrorMessage: `Not authorized for the source ${source}.`,
            };
          }
          let bus: string;
          try {
            bus = busArn(entry.EventBusName);
          } catch {
            failed += 1;
            return { ErrorCode: 'ResourceNotFoundException', ErrorMessage: 'Event bus does not exist.' };
          }
          const time = typeof entry.Time === 'number' ? new Date(entry.Time * 1000) : new Date();
          const event: Record<string, unknown> = {
            version: '0',
            id: randomUUID(),
            'detail-type': String(entry.DetailType ?? ''),
            source,
            account: options.accountId,
            time: time.toISOString().replace(/\.\d{3}Z$/, 'Z'),
            region: options.region,
            resources: (entry.Resources ?? []) as string[],
            detail: JSON.parse(String(entry.Detail ?? '{}')) as unknown,
          };
          publish(event, bus, ctx.accessKeyId);
          return { EventId: event.id };
        });
        return { FailedEntryCount: failed, Entries: out };
      },
    },
  });
  return Object.assign(standin, {
    events,
    putServiceEvent: (event: Record<string, unknown>) => publish(event, `${prefix}:event-bus/default`, 'aws'),
  });
}
