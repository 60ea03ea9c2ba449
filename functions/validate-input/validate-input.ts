/**
 * ValidateInput, the first state of every redrive execution: checks the execution input and turns
 * it into the plan (`$.plan`) every later state reads.
 *
 * Order matters: the input is parsed first, with no call to any AWS service, and every
 * problem is reported at once as `Redrive.InvalidInput`. Only a valid input leads to reads
 * (GetQueueUrl, the queue registration); ValidateInput never writes, sends or deletes anything.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
 * @see https://docs.aws.amazon.com/lambda/latest/dg/nodejs-exceptions.html
 */
import { createHash } from 'node:crypto';
import {
  DEFAULT_VERIFY_MARGIN_SECONDS,
  ExecutionInput,
  type ExecutionPlan,
  HISTORY_EVENT_QUOTA,
  parseSqsArn,
  unknownField,
} from '#incident/execution-input.js';
import type { OpenIncidents } from '#incident/open-incident.js';
import type { AbandonedSession } from '#inventory/inventory-session.js';
import type { QueueRegistration } from '#inventory/model.js';
import { InvalidInputError } from '#platform/errors.js';
import { formatIssues } from '#platform/middleware.js';

/** Resolves a queue ARN to its URL (GetQueueUrl with the ARN's name and account). */
export interface QueueLocator {
  /**
   * @throws QueueNotFoundError (`Redrive.QueueNotFound`) when the queue does not exist.
   * @throws AccessDeniedError (`Redrive.AccessDenied`) when the role may not see it.
   */
  queueUrl(queueArn: string): Promise<string>;
}

/** The queue registry port (`functions/shared/incident/queue-registry.ts`, docs/contracts.md). */
export interface RegistrationSource {
  /** The registration of `dlqArn`, defaults applied, or the default registration when none exists. */
  getRegistration(dlqArn: string): Promise<QueueRegistration>;
}

/** What {@link validateInput} needs from the outside. */
export interface ValidateInputDeps {
  queues: QueueLocator;
  registrations: RegistrationSource;
  /** The region this pipeline runs in (`AWS_REGION`): its SQS client reaches only that region. */
  region: string;
  /** `PARKING_QUEUE_URL`: the pipeline's parking queue when the registration names none. */
  defaultParkingQueueUrl?: string | undefined;
  /**
   * The DLQ's open incident: a console start that names no incident continues it (a restart
   * after a failed run). Without it every such start derives its own incident id.
   */
  openIncidents?: Pick<OpenIncidents, 'get'>;
  /**
   * The DLQ's abandoned inventory session (a triage that died mid-scan): a console start that
   * names no inventory takes it over, so its inventory loop finishes what the dead run held.
   */
  abandonedSessions?: { find(dlqArn: string, nowMs: number): Promise<AbandonedSession | undefined> };
  /** Epoch milliseconds. @default Date.now */
  now?: () => number;
}

/**
 * What the ValidateInput Task sends (statemachines/redrive.asl.json): `{ "input.$": "$" }`, better
 * with `"executionName.$": "$$.Execution.Name"` so a console start without an `incidentId` gets one
 * derived from its execution name. A direct invocation may also send the bare execution input.
 */
export interface WrappedExecutionInput {
  input: unknown;
  executionName?: string;
}

/** True when `event` is the `{ input, executionName? }` form (and has no other key). */
export function isWrapped(event: unknown): event is WrappedExecutionInput {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return false;
  const keys = Object.keys(event);
  const name = (event as { executionName?: unknown }).executionName;
  return (
    keys.includes('input') &&
    keys.every((k) => k === 'input' || k === 'executionName') &&
    (name === undefined || typeof name === 'string')
  );
}

/** Most problems listed in one error (the rest are counted): Step Functions keeps 32,768 characters of Cause. */
export const MAX_LISTED_PROBLEMS = 40;
/** Longest problem line, characters (a pasted blob as a field name stays readable). */
export const MAX_PROBLEM_CHARS = 200;

/**
 * Parses the execution input with {@link ExecutionInput}; no I/O.
 *
 * @throws InvalidInputError (`Redrive.InvalidInput`) listing every problem (at most
 *   {@link MAX_LISTED_PROBLEMS}, each at most {@link MAX_PROBLEM_CHARS} characters, so the
 *   Lambda error fits in the 32,768 characters Step Functions keeps of a Cause).
 * @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_TaskFailedEventDetails.html
 */
export function parseExecutionInput(raw: unknown): ExecutionInput {
  const result = ExecutionInput.safeParse(raw);
  // JSON.parse makes "__proto__" an own key that object schemas never see: refuse it like any
  // other unknown field instead of silently ignoring it.
  const proto =
    typeof raw === 'object' && raw !== null && Object.hasOwn(raw, '__proto__')
      ? [`__proto__: ${unknownField('__proto__')}`]
      : [];
  if (result.success && proto.length === 0) return result.data;
  const issues = result.success ? [] : formatIssues(result.error);
  const problems = [...issues, ...proto].map((p) =>
    p.length > MAX_PROBLEM_CHARS ? `${p.slice(0, MAX_PROBLEM_CHARS - 3)}...` : p,
  );
  const listed = problems.slice(0, MAX_LISTED_PROBLEMS);
  if (problems.length > listed.length)
    listed.push(`... and ${problems.length - listed.length} more problems`);
  throw new InvalidInputError('invalid execution input', listed, result.success ? undefined : result.error);
}

/** The requester recorded when the input names none. */
export const DEFAULT_REQUESTED_BY = 'console';

/**
 * Derives the incident id of a console start that has none. Deterministic (a retried
 * Lambda invocation or a Step Functions redrive of the execution gets the same id; the input
 * carries no random field):
 * - with the execution name: `console-<queue name>-<sha256(dlqArn, executionName) 16 hex>`. The
 *   name is unique per state machine for 90 days, so each console start is its own incident.
 * - without it: `console-<queue name>-<sha256(canonical input) 16 hex>`, so identical inputs map to
 *   the same incident (tell them apart with `requestedBy`, or pass the execution name).
 */
export function deriveIncidentId(input: ExecutionInput, executionName: string | undefined): string {
  const queueName = parseSqsArn(input.dlqArn)?.queueName ?? 'queue';
  const seed =
    executionName === undefined
      ? `input\n${canonicalJson(input)}`
      : `execution\n${input.dlqArn}\n${executionName}`;
  const hash = createHash('sha256').update(seed).digest('hex').slice(0, 16);
  return `console-${queueName}-${hash}`;
}

/** JSON with object keys sorted, so equal inputs hash equally whatever the key order. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * The ramp: the input's rates, else the registration's, sorted and de-duplicated; `maxRate` caps
 * every rate (the registration's `[5, 50, 200]` with `maxRate: 100` becomes `[5, 50, 100]`).
 * Rates given together with `maxRate` were already checked not to exceed it.
 */
export function planRampRates(input: ExecutionInput, registration: QueueRegistration): number[] {
  const rates = input.rampRates ?? registration.rampRates;
  const capped = input.maxRate === undefined ? rates : rates.map((r) => Math.min(r, input.maxRate as number));
  return [...new Set(capped)].sort((a, b) => a - b);
}

/** Queues outside the pipeline's region: its SQS client cannot reach them. Pure. */
function regionProblems(input: ExecutionInput, region: string): string[] {
  const problems: string[] = [];
  for (const field of ['dlqArn', 'destinationArn'] as const) {
    const arn = input[field];
    const parsed = arn === undefined ? undefined : parseSqsArn(arn);
    if (parsed && parsed.region !== region) {
      problems.push(
        `${field}: the queue is in ${parsed.region}, but this pipeline runs in ${region} (start the pipeline deployed in ${parsed.region})`,
      );
    } else if (parsed && parsed.partition !== partitionOf(region)) {
      // GetQueueUrl looks a queue up by name and account only: a wrong partition would resolve
      // the queue and fail much later, in the move task, on an ARN that names no queue.
      problems.push(
        `${field}: partition ${parsed.partition} does not match region ${region} (use arn:${partitionOf(region)}:sqs:...)`,
      );
    }
  }
  return problems;
}

/**
 * The ARN partition of a region.
 * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/reference-arns.html
 */
export function partitionOf(region: string): string {
  if (region.startsWith('cn-')) return 'aws-cn';
  if (region.startsWith('us-gov-')) return 'aws-us-gov';
  if (region.startsWith('us-isob-')) return 'aws-iso-b';
  if (region.startsWith('us-iso-')) return 'aws-iso';
  if (region.startsWith('eusc-')) return 'aws-eusc';
  return 'aws';
}

/** Problems that need the queue registration; each names its field. */
function registrationProblems(input: ExecutionInput, registration: QueueRegistration): string[] {
  const problems: string[] = [];
  if (input.approvedBy !== undefined && !registration.allowPreApproved) {
    problems.push('approvedBy: pre-approved starts are not allowed for this queue');
  }
  // The registration's own fields (parking queue, ramp, Slack ids) were checked by its schema when
  // the registry read it (functions/shared/inventory/model.ts).
  return problems;
}

/**
 * Validates the execution input and builds the plan.
 *
 * 1. Parses the input with {@link ExecutionInput} and checks that the queues are in the pipeline's
 *    region (no I/O). Every problem is listed.
 * 2. Reads the queue registration and checks the pre-approval rule (`approvedBy` needs
 *    `allowPreApproved`).
 * 3. Resolves the DLQ URL (and checks that the destination and parking queues exist).
 * 4. Applies defaults: mode `redrive`, registration's sampleSize / rampRates / dwellSeconds /
 *    maxRedrives, verifyMarginSeconds 30, requestedBy `console`; without an inventoryId the DLQ's
 *    abandoned inventory session, if any (a triage that died mid-scan: its incident and
 *    inventory, so the inventory loop takes over what it held); without an incidentId the DLQ's
 *    open incident (a run of it failed or stopped with messages left), else a derived one. The
 *    execution name becomes the plan's `runId` (the owner of its ledger entries).
 *
 * @param event - `{ input, executionName? }` ({@link WrappedExecutionInput}) or the bare execution input.
 * @returns the plan for `$.plan`.
 * @throws InvalidInputError (`Redrive.InvalidInput`) listing every problem, each naming its field.
 * @throws QueueNotFoundError (`Redrive.QueueNotFound`) when the DLQ, destination or parking queue is missing.
 * @throws AccessDeniedError (`Redrive.AccessDenied`) when GetQueueUrl is denied.
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_GetQueueUrl.html
 */
export async function validateInput(event: unknown, deps: ValidateInputDeps): Promise<ExecutionPlan> {
  const { input: raw, executionName } = isWrapped(event) ? event : { input: event, executionName: undefined };
  const input = parseExecutionInput(raw);

  const outOfRegion = regionProblems(input, deps.region);
  if (outOfRegion.length > 0) throw new InvalidInputError('invalid execution input', outOfRegion);

  const registration = await deps.registrations.getRegistration(input.dlqArn);
  const problems = registrationProblems(input, registration);
  if (problems.length > 0) throw new InvalidInputError('invalid execution input', problems);

  const dlqUrl = await deps.queues.queueUrl(input.dlqArn);
  if (input.destinationArn !== undefined) await deps.queues.queueUrl(input.destinationArn);
  const parkingQueueUrl =
    registration.parkingQueueArn !== undefined
      ? await deps.queues.queueUrl(registration.parkingQueueArn)
      : (deps.defaultParkingQueueUrl ?? null);

  // A triage that died mid-scan left its session holding messages invisible: a start that names no
  // inventory takes it over (its incident, its hold pages), and the inventory loop waits them out.
  const abandoned =
    input.inventoryId === undefined
      ? await deps.abandonedSessions?.find(input.dlqArn, (deps.now ?? Date.now)())
      : undefined;
  const adopted =
    abandoned && (input.incidentId === undefined || input.incidentId === abandoned.incidentId)
      ? abandoned
      : undefined;
  const open =
    input.incidentId === undefined && !adopted ? await deps.openIncidents?.get(input.dlqArn) : undefined;
  return {
    incidentId:
      input.incidentId ?? adopted?.incidentId ?? open?.incidentId ?? deriveIncidentId(input, executionName),
    dlqArn: input.dlqArn,
    dlqUrl,
    mode: input.mode ?? 'redrive',
    destinationArn: input.destinationArn ?? null,
    allowCustomDestinationForSharedDlq: input.allowCustomDestinationForSharedDlq ?? false,
    sampleSize: input.sampleSize ?? registration.sampleSize,
    rampRates: planRampRates(input, registration),
    dwellSeconds: input.dwellSeconds ?? registration.dwellSeconds,
    verifyMarginSeconds: input.verifyMarginSeconds ?? DEFAULT_VERIFY_MARGIN_SECONDS,
    discardPoison: input.discardPoison ?? false,
    preApproved: input.approvedBy !== undefined,
    approvedBy: input.approvedBy ?? null,
    requestedBy: input.requestedBy ?? DEFAULT_REQUESTED_BY,
    parkingQueueUrl,
    maxRedrives: registration.maxRedrives,
    selection: input.selection ?? null,
    unpark: input.unpark ?? false,
    transform: input.transform ?? null,
    ...(executionName !== undefined ? { runId: executionName } : {}),
    inventoryId: input.inventoryId ?? adopted?.inventoryId ?? null,
    historyEventLimit: input.historyEventLimit ?? HISTORY_EVENT_QUOTA,
    continuation: input.continuation ?? 0,
  };
}
