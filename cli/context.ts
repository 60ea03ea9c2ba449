/**
 * What every `dlq` command works with: the pipeline's stores and the Step Functions client, built
 * from the SDK's standard variables (`AWS_REGION`, `AWS_PROFILE` or the credential chain,
 * `AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL_SQS`, `AWS_ENDPOINT_URL_SFN` for the local
 * stack) plus `TABLE_NAME` and `STATE_MACHINE_ARN` (the pipeline stack's outputs).
 *
 * @see https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html
 */
import type { SFNClient } from '@aws-sdk/client-sfn';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { type AuditTrail, createAuditTrail } from '#incident/audit-trail.js';
import { createIncidentStore, type Incident, type IncidentStore } from '#incident/incident-store.js';
import { createQueueRegistry, type QueueRegistry } from '#incident/queue-registry.js';
import { createEnvelopeStore, type EnvelopeStore } from '#inventory/envelope-store.js';
import { sfnClient, sqsClient, tableAccess } from '#platform/clients.js';
import { type PipelineConfig, readConfig } from '#platform/config.js';
import { ConfigurationError } from '#platform/errors.js';
import { CliError, type CliIO } from './output.js';

/** The ports of the CLI's commands. */
export interface CliContext {
  io: CliIO;
  /** The pipeline table (`TABLE_NAME`). */
  tableName: string;
  /** Now, epoch milliseconds. */
  now(): number;
  incidents: IncidentStore;
  audit: AuditTrail;
  envelopes: EnvelopeStore;
  registry: QueueRegistry;
  sfn(): SFNClient;
  sqs(): SQSClient;
  /** The redrive state machine: `--state-machine-arn`, else `STATE_MACHINE_ARN`. */
  stateMachineArn(flag?: string): string;
  /** Who runs the command, for the audit trail: `--by`, else `DLQ_OPERATOR`, else `USER`. */
  operator(flag?: string): string;
}

/**
 * The pipeline configuration the CLI shares with the functions (`TABLE_NAME`, `STATE_MACHINE_ARN`...).
 * @throws CliError (exit 2) naming each bad variable.
 */
function configOf(env: NodeJS.ProcessEnv): PipelineConfig {
  try {
    return readConfig(env);
  } catch (error) {
    if (error instanceof ConfigurationError) throw new CliError(error.message, 2);
    throw error;
  }
}

/** Builds the context from the environment. */
export function contextFromEnv(io: CliIO, env: NodeJS.ProcessEnv = process.env): CliContext {
  const config = configOf(env);
  const table = tableAccess(config);
  return {
    io,
    tableName: config.tableName,
    now: io.now ?? Date.now,
    incidents: createIncidentStore(table),
    audit: createAuditTrail(table),
    envelopes: createEnvelopeStore(table),
    registry: createQueueRegistry(table),
    sfn: sfnClient,
    sqs: sqsClient,
    stateMachineArn(flag) {
      const arn = flag ?? config.stateMachineArn;
      if (!arn)
        throw new CliError(
          '--state-machine-arn: is required (or set STATE_MACHINE_ARN to the pipeline stack output StateMachineAliasArn)',
          2,
        );
      return arn;
    },
    operator(flag) {
      return flag ?? env.DLQ_OPERATOR ?? env.USER ?? env.USERNAME ?? 'cli';
    },
  };
}

/** The incident, or a one-line error (exit 1) naming it. */
export async function requireIncident(ctx: CliContext, incidentId: string): Promise<Incident> {
  const incident = await ctx.incidents.getIncident(incidentId);
  if (!incident)
    throw new CliError(
      `incident ${incidentId}: not found in table ${ctx.tableName} (dlq incidents lists them)`,
    );
  return incident;
}
