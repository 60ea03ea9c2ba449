/**
 * The queue registration: what a monitored DLQ's owner decides (Slack channel, approvers, ramp,
 * origin, access roles), one schema for everyone who reads or writes it: the pipeline's functions
 * and the dlq CLI (through functions/shared/inventory/model.ts) and the `MonitoredDlq` construct
 * (`@dlq-redrive/cdk`), which refuses at synth what the functions would refuse at run time.
 * Stored at `DLQ#<dlqArn>` / `CONFIG` ({@link registrationItem}); docs/contracts.md, "Stores".
 */
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { parseSqsArn, SQS_QUEUE_ARN_PATTERN } from './sqs-arn.js';

// `zod/mini` loads no locale: English messages, the same classic zod gives (name the field's range).
z.config(en());

const ARN_REGION = '[a-z]{2}(?:-[a-z]+)+-\\d';
/** An SNS topic ARN (standard or FIFO). */
export const SNS_TOPIC_ARN = new RegExp(
  `^arn:aws[a-z-]*:sns:${ARN_REGION}:\\d{12}:[A-Za-z0-9_-]{1,256}(\\.fifo)?$`,
);
/** An EventBridge event bus ARN. */
export const EVENT_BUS_ARN = new RegExp(
  `^arn:aws[a-z-]*:events:${ARN_REGION}:\\d{12}:event-bus/[A-Za-z0-9._/-]{1,256}$`,
);
/** A Lambda function ARN, optionally with a version or alias. */
export const LAMBDA_FUNCTION_ARN = new RegExp(
  `^arn:aws[a-z-]*:lambda:${ARN_REGION}:\\d{12}:function:[A-Za-z0-9_-]{1,64}(:[A-Za-z0-9$_-]{1,128})?$`,
);
/** An IAM role ARN. */
export const IAM_ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[A-Za-z0-9+=,.@_/-]{1,512}$/;

/** An integer in `min..max`. */
const intIn = (min: number, max: number) =>
  z.number().check(z.int(`must be an integer ${min}..${max}`), z.gte(min), z.lte(max));

const returnWindow = z.optional(intIn(0, 86_400));

/** The registered origin of a DLQ that no SQS redrive policy feeds (docs/contracts.md, "The recording mover"). */
export const MessageOriginRegistration = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('sns'),
    topicArn: z.string().check(z.regex(SNS_TOPIC_ARN, 'must be an SNS topic ARN')),
    returnWindowSeconds: returnWindow,
  }),
  z.strictObject({
    kind: z.literal('eventbridge'),
    eventBusArn: z.string().check(z.regex(EVENT_BUS_ARN, 'must be an EventBridge event bus ARN')),
    returnWindowSeconds: returnWindow,
  }),
  z.strictObject({
    kind: z.literal('lambda'),
    functionArn: z.string().check(z.regex(LAMBDA_FUNCTION_ARN, 'must be a Lambda function ARN')),
    returnWindowSeconds: returnWindow,
  }),
]);
export type MessageOriginRegistration = z.infer<typeof MessageOriginRegistration>;

/** A role the pipeline assumes for targets in another account (and Region). */
export const AccessRole = z.strictObject({
  accountId: z.string().check(z.regex(/^\d{12}$/, 'must be a 12-digit account id')),
  region: z.optional(z.string().check(z.regex(new RegExp(`^${ARN_REGION}$`), 'must be a Region code'))),
  roleArn: z.string().check(z.regex(IAM_ROLE_ARN, 'must be an IAM role ARN')),
  /** The external id the role's trust policy requires, if any. */
  externalId: z.optional(
    z.string().check(z.regex(/^[\w+=,.@:/-]{2,1224}$/, 'must be 2-1224 of \\w+=,.@:/-')),
  ),
});
export type AccessRole = z.infer<typeof AccessRole>;

/** StartMessageMoveTask's cap, messages per second. */
const MAX_RATE = 500;
/** Most ramp steps: each costs a cancel, a start and at least one dwell. */
const MAX_RAMP_STEPS = 10;
/** Most Slack approvers of one queue. */
const MAX_APPROVERS = 100;
/** Most source queues a registration names. */
const MAX_SOURCE_QUEUES = 100;

/**
 * Control, format (bidirectional overrides, zero-width), surrogate and separator characters: a
 * name shown in Slack and in the report must read as what it is.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

/** A non-blank string of at most `max` characters, without control or invisible characters. */
const text = (max: number) =>
  z.string().check(
    z.minLength(1, 'must not be empty'),
    z.maxLength(max, `must be at most ${max} characters`),
    z.refine((v) => v.trim().length > 0, 'must not be blank'),
    z.refine((v) => !INVISIBLE.test(v), 'must not contain control or invisible characters'),
  );

const sqsArn = (what: string) =>
  z
    .string()
    .check(
      z.regex(SQS_QUEUE_ARN_PATTERN, `must be ${what} (arn:aws:sqs:<region>:<account-id>:<queue-name>)`),
    );

/**
 * A Slack channel id: `C` (public), `G` (private) or `D` (direct message) and 8-20 capital letters
 * or digits, e.g. `C0123456789`; not a `#name`.
 * @see https://api.slack.com/types/conversation
 */
export const SLACK_CHANNEL_ID = /^[CGD][A-Z0-9]{8,20}$/;
/**
 * A Slack user id: `U` or `W` (Enterprise Grid) and 8-20 capital letters or digits, e.g. `U0123456789`.
 * @see https://api.slack.com/types/user
 */
export const SLACK_USER_ID = /^[UW][A-Z0-9]{8,20}$/;

/**
 * An SQS message attribute name: 1-256 of `A-Za-z0-9_-.`, not starting with `AWS.` or `Amazon.`
 * (any case), no leading, trailing or doubled period.
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html
 */
const ATTRIBUTE_NAME = /^(?!(?:aws|amazon)\.)(?!\.)(?!.*\.\.)[A-Za-z0-9_.-]{1,256}(?<!\.)$/i;

/** What a registration's cross-field checks find, each naming its field. */
function registrationProblems(input: {
  dlqArn: unknown;
  rampRates: unknown;
  approvers: unknown;
  parkingQueueArn?: unknown;
  sourceQueueArns?: unknown;
}): Array<{ path: PropertyKey[]; message: string }> {
  const problems: Array<{ path: PropertyKey[]; message: string }> = [];
  const strings = (v: unknown) =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  const r = {
    dlqArn: typeof input.dlqArn === 'string' ? input.dlqArn : '',
    rampRates: Array.isArray(input.rampRates) ? input.rampRates.filter((x) => typeof x === 'number') : [],
    approvers: Array.isArray(input.approvers) ? input.approvers : [],
    parkingQueueArn: typeof input.parkingQueueArn === 'string' ? input.parkingQueueArn : undefined,
    sourceQueueArns: strings(input.sourceQueueArns),
  };
  // Sizes are checked here, not with zod's length checks: a failed length check would stop the
  // other cross-field checks, and every problem is reported at once.
  if (r.rampRates.length === 0)
    problems.push({ path: ['rampRates'], message: 'must have at least one rate' });
  if (r.rampRates.length > MAX_RAMP_STEPS)
    problems.push({ path: ['rampRates'], message: `must have at most ${MAX_RAMP_STEPS} steps` });
  if (r.approvers.length > MAX_APPROVERS)
    problems.push({ path: ['approvers'], message: `must list at most ${MAX_APPROVERS} approvers` });
  if (r.rampRates.some((rate, i) => i > 0 && rate <= (r.rampRates[i - 1] as number)))
    problems.push({
      path: ['rampRates'],
      message: 'must be strictly ascending',
    });
  const seen = new Set<unknown>();
  for (const [i, id] of r.approvers.entries()) {
    if (seen.has(id) && typeof id === 'string')
      problems.push({ path: ['approvers', i], message: `${id} is listed twice` });
    seen.add(id);
  }
  const dlq = parseSqsArn(r.dlqArn);
  const sources = r.sourceQueueArns;
  for (const [i, arn] of sources.entries()) {
    const source = parseSqsArn(arn);
    if (arn === r.dlqArn)
      problems.push({ path: ['sourceQueueArns', i], message: 'must not be the DLQ itself' });
    else if (dlq && source && source.fifo !== dlq.fifo)
      problems.push({
        path: ['sourceQueueArns', i],
        message: `must be the DLQ's queue type (${dlq.fifo ? 'FIFO' : 'standard'})`,
      });
  }
  const parking = r.parkingQueueArn === undefined ? undefined : parseSqsArn(r.parkingQueueArn);
  if (dlq && parking && r.parkingQueueArn !== undefined) {
    const field = ['parkingQueueArn'];
    if (r.parkingQueueArn === r.dlqArn)
      problems.push({ path: field, message: 'must not be the DLQ itself: parked messages would stay in it' });
    else if (sources.includes(r.parkingQueueArn))
      problems.push({
        path: field,
        message: 'must not be a source queue of the DLQ: parked poison would go back to its consumer',
      });
    if (parking.fifo !== dlq.fifo)
      problems.push({
        path: field,
        message: `must be a ${dlq.fifo ? 'FIFO' : 'standard'} queue like the DLQ (given a ${parking.fifo ? 'FIFO' : 'standard'} queue)`,
      });
    if (
      parking.accountId !== dlq.accountId ||
      parking.region !== dlq.region ||
      parking.partition !== dlq.partition
    )
      problems.push({
        path: field,
        message: `must be in the DLQ's account and Region (${dlq.accountId}, ${dlq.region}; given ${parking.accountId}, ${parking.region})`,
      });
  }
  return problems;
}

/**
 * Registration of a monitored DLQ: read by every function, written by the `MonitoredDlq` construct
 * (or the CLI). One schema decides what can work, field by field, before anything is stored or
 * deployed: a registration that fails it is refused naming each field (the construct at synth, the
 * registry on put and on read).
 */
export const QueueRegistration = z
  .strictObject({
    dlqArn: sqsArn('an SQS queue ARN'),
    owner: z.optional(text(256)),
    slackChannel: z.optional(
      z
        .string()
        .check(
          z.regex(
            SLACK_CHANNEL_ID,
            'must be a Slack channel id: C, G or D and 8-20 capital letters or digits (e.g. C0123456789), not a #name',
          ),
        ),
    ),
    /** Slack user ids allowed to approve (at most 100). Empty: nobody can approve from Slack. */
    approvers: z._default(
      z.array(
        z
          .string()
          .check(
            z.regex(
              SLACK_USER_ID,
              'must be a Slack user id: U or W and 8-20 capital letters or digits (e.g. U0123456789)',
            ),
          ),
      ),
      [],
    ),
    /** Where the producer's own id lives: a message attribute name, or a JSON path in the body. */
    producerKey: z.optional(
      z.union([
        z.strictObject({
          attribute: z
            .string()
            .check(
              z.regex(
                ATTRIBUTE_NAME,
                'must be an SQS message attribute name (1-256 of A-Za-z0-9_-., not starting with AWS. or Amazon.)',
              ),
            ),
        }),
        z.strictObject({
          jsonPath: z
            .string()
            .check(
              z.maxLength(256, 'must be at most 256 characters'),
              z.regex(/^\$(\.[A-Za-z0-9_-]+)+$/, 'must look like $.a.b'),
            ),
        }),
      ]),
    ),
    sampleSize: z._default(intIn(1, 100), 5),
    /** Rates of the ramp, messages per second: 1-10 steps, strictly ascending, each 1..500. */
    rampRates: z._default(z.array(intIn(1, MAX_RATE)), [5, 50, 200]),
    /** Seconds to dwell at each ramp step before the health gate. */
    dwellSeconds: z._default(intIn(1, 3600), 60),
    /** Redrive count at which a message is parked instead of redriven. */
    maxRedrives: z._default(intIn(1, 100), 3),
    /**
     * Where poison goes: an SQS queue ARN in the DLQ's account and Region, of its type, neither
     * the DLQ nor one of its source queues. @default the pipeline's parking queue
     */
    parkingQueueArn: z.optional(sqsArn('an SQS queue ARN')),
    /**
     * The source queues whose redrive policy names this DLQ (the construct writes them): the
     * parking queue must not be one of them.
     */
    sourceQueueArns: z.optional(
      z
        .array(sqsArn('an SQS queue ARN'))
        .check(z.maxLength(MAX_SOURCE_QUEUES, `must list at most ${MAX_SOURCE_QUEUES} queues`)),
    ),
    /** Allow inventorying a DLQ that has its own redrive policy (every receive counts toward it). */
    allowInventoryOfQueueWithRedrivePolicy: z._default(z.boolean(), false),
    /** Allow console starts that arrive pre-approved (`approvedBy`). */
    allowPreApproved: z._default(z.boolean(), false),
    /**
     * What feeds the DLQ when it is not an SQS queue's redrive policy: an SNS subscription, an
     * EventBridge rule target, or a Lambda function's async invocations (DLQ or on-failure
     * destination). The recording mover sends the messages back there. `returnWindowSeconds`: how
     * long a message sent back can take to dead-letter again (the subscription's delivery retries,
     * the target's retry policy, the function's retries and their backoff).
     */
    origin: z.optional(MessageOriginRegistration),
    /**
     * IAM roles the pipeline assumes to reach a target in another account or Region than the DLQ
     * (`region` absent: any Region of that account). A target elsewhere without one is refused.
     */
    accessRoles: z.optional(z.array(AccessRole)),
  })
  .check(
    z.superRefine(
      (r, ctx) => {
        for (const p of registrationProblems(r))
          ctx.addIssue({ code: 'custom', message: p.message, path: p.path, input: r });
      },
      // Also when a field failed: every problem is reported at once (the value may then be only
      // partly of the right types, which registrationProblems checks for).
      { when: () => true },
    ),
  );
export type QueueRegistration = z.infer<typeof QueueRegistration>;

/** The shape version of a stored registration (`shapeVersion`; docs/contracts.md "Record shape versions"). */
export const REGISTRATION_SHAPE_VERSION = 1;
/** `gsi1pk` of every registration item: the listing partition of the index (`dlq registrations`). */
export const REGISTRATION_LISTING = 'REGISTRATIONS';

/** The table keys of a DLQ's registration: `DLQ#<dlqArn>` / `CONFIG`. */
export const registrationKeys = {
  pk: (dlqArn: string) => `DLQ#${dlqArn}`,
  sk: 'CONFIG',
} as const;

/**
 * The registration item exactly as stored by the `MonitoredDlq` construct and the CLI (`dlq
 * register`): `pk` `DLQ#<dlqArn>`, `sk` `CONFIG`, the listing keys of the pipeline table's index
 * (`gsi1pk`, `gsi1sk`), the shape version, then the registration's fields.
 */
export function registrationItem(registration: QueueRegistration) {
  return {
    pk: registrationKeys.pk(registration.dlqArn),
    sk: registrationKeys.sk,
    gsi1pk: REGISTRATION_LISTING,
    gsi1sk: registration.dlqArn,
    shapeVersion: REGISTRATION_SHAPE_VERSION,
    ...registration,
  };
}

/** A registration's problem: the field (`rampRates.0`), what it must be, and the value given. */
export interface RegistrationProblem {
  readonly field: string;
  readonly message: string;
  readonly given: unknown;
}

/**
 * Checks a registration with {@link QueueRegistration}: the parsed registration (defaults
 * applied), or every problem at once, each with the value given.
 */
export function checkRegistration(
  input: Record<string, unknown>,
): { success: true; registration: QueueRegistration } | { success: false; problems: RegistrationProblem[] } {
  const parsed = QueueRegistration.safeParse(input);
  if (parsed.success) return { success: true, registration: parsed.data };
  return {
    success: false,
    problems: parsed.error.issues.map((issue) => {
      const path = issue.path.map(String);
      const given = path.reduce<unknown>(
        (value, key) =>
          value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined,
        input,
      );
      return { field: path.join('.') || '(registration)', message: issue.message, given };
    }),
  };
}
