/**
 * The input of a redrive execution, whoever starts it: triage (after an alarm) or an operator in
 * the Step Functions console. `ValidateInput`, the first state, parses it with
 * {@link ExecutionInput} before anything else happens and turns it into an {@link ExecutionPlan}
 * (`$.plan`). `statemachines/execution-input.schema.json` is generated from this schema
 * (`npm run schemas`), never edited by hand.
 *
 * Every problem is reported at once, each naming its field:
 * `dlqArn: is required`, `dlqArn: must be an SQS ARN, got a queue URL (use arn:aws:sqs:...)`,
 * `maxRate: must be an integer 1..500, got "fifty"`, `sampleSize: must be >= 1 ...`,
 * `mode: must be one of redrive, sample-only, dry-run, got "delete-all"`,
 * `samplesize: is not an execution input field (did you mean sampleSize?)`.
 *
 * The input must carry no random or time-of-call fields: a retried start must send byte-identical
 * input to be idempotent, so nothing here is a timestamp or a generated id.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
 */
import { parseSqsArn, SQS_QUEUE_ARN_PATTERN } from '@dlq-redrive/contract';
import * as z from '#platform/zod.js';
import {
  given,
  HISTORY_EVENT_QUOTA,
  MAX_DWELL_SECONDS,
  MAX_MOVE_RATE,
  MAX_RAMP_STEPS,
  MAX_SAMPLE_SIZE,
  MAX_VERIFY_MARGIN_SECONDS,
  MIN_HISTORY_EVENT_LIMIT,
  REDRIVE_MODES,
  Selection,
  show,
  suggestField,
  Transform,
  textField,
} from './execution-plan.js';

export {
  DEFAULT_VERIFY_MARGIN_SECONDS,
  ExecutionPlan,
  HISTORY_EVENT_QUOTA,
  MAX_DWELL_SECONDS,
  MAX_MOVE_RATE,
  MAX_RAMP_STEPS,
  MAX_SAMPLE_SIZE,
  MAX_SELECTED_MESSAGE_IDS,
  MAX_SELECTION_ENTRIES,
  MAX_TRANSFORM_ATTRIBUTES,
  MAX_VERIFY_MARGIN_SECONDS,
  PROTECTED_ATTRIBUTES,
  parseSqsArn,
  REDRIVE_MODES,
  type RedriveMode,
  runIdOf,
  Selection,
  SQS_QUEUE_ARN_PATTERN,
  type SqsArn,
  Transform,
} from './execution-plan.js';

/**
 * When `value` looks like an SQS queue URL, the ARN it names (a hint for the error message), else
 * undefined. Handles `https://sqs.<region>.amazonaws.com/<account>/<name>`, the legacy
 * `https://<region>.queue.amazonaws.com/...` form and the `.com.cn` endpoints. The region of a
 * URL without one (legacy `queue.amazonaws.com`, local endpoints) is shown as `<region>`.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-queue-message-identifiers.html
 */
export function queueUrlToArnHint(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  const segments = url.pathname.split('/').filter((s) => s.length > 0);
  const [accountId, queueName] = segments;
  if (segments.length !== 2 || !accountId || !queueName || !/^\d{12}$/.test(accountId)) return undefined;
  const host = url.hostname;
  const region =
    /^sqs\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/.exec(host)?.[1] ??
    /^([a-z0-9-]+)\.queue\.amazonaws\.com(\.cn)?$/.exec(host)?.[1] ??
    '<region>';
  const partition = host.endsWith('.cn') ? 'aws-cn' : 'aws';
  return `arn:${partition}:sqs:${region}:${accountId}:${queueName}`;
}

const ARN_SHAPE = 'arn:aws:sqs:<region>:<account-id>:<queue-name>';

/** An SQS queue ARN field; a queue URL is refused with the ARN it names as a hint. */
function sqsArnField() {
  return z
    .string({
      error: (issue) =>
        issue.input === undefined ? 'is required' : `must be an SQS ARN (${ARN_SHAPE})${given(issue)}`,
    })
    .check(
      z.regex(SQS_QUEUE_ARN_PATTERN, {
        error: (issue) => {
          const hint = typeof issue.input === 'string' ? queueUrlToArnHint(issue.input) : undefined;
          return hint
            ? `must be an SQS ARN, got a queue URL (use ${hint})`
            : `must be an SQS ARN (${ARN_SHAPE})${given(issue)}`;
        },
      }),
    );
}

/** An integer in `min..max`; every violation says the range and the value given. */
function intField(min: number, max: number) {
  const range = `an integer ${min}..${max}`;
  return z
    .number({ error: (issue) => `must be ${range}${given(issue)}` })
    .check(
      z.int({ error: (issue) => `must be ${range}${given(issue)}` }),
      z.gte(min, { error: (issue) => `must be >= ${min} (${range})${given(issue)}` }),
      z.lte(max, { error: (issue) => `must be <= ${max} (${range})${given(issue)}` }),
    );
}

function boolField() {
  return z.boolean({ error: (issue) => `must be true or false${given(issue)}` });
}

/** An optional field with its description (the generated JSON Schema carries it). */
function optionalField<T extends z.ZodMiniType>(schema: T, description: string) {
  return z.optional(schema).check(z.describe(description));
}

const shape = {
  /**
   * The DLQ to redrive, as an SQS queue ARN (`arn:aws:sqs:us-east-1:111122223333:orders-dlq`).
   * Required. A queue URL is refused (the message names the ARN to use instead): URLs and ARNs
   * are both accepted by different AWS APIs, and guessing the region of a legacy URL is unsafe.
   */
  dlqArn: sqsArnField().check(
    z.describe(
      'Required. The DLQ to redrive, as an SQS queue ARN (arn:aws:sqs:<region>:<account-id>:<queue-name>); a queue URL is refused.',
    ),
  ),
  /**
   * The incident this execution belongs to. Triage always sets it. A console start may omit it:
   * ValidateInput then derives one deterministically (see docs/console.md). 1-128 printable
   * characters, no whitespace.
   */
  incidentId: optionalField(
    z.string({ error: (issue) => `must be a string of 1-128 printable characters${given(issue)}` }).check(
      z.regex(/^[\x21-\x7E]{1,128}$/, {
        error: (issue) => `must be 1-128 printable characters without spaces${given(issue)}`,
      }),
    ),
    'Set by triage. Console starts may omit it: ValidateInput derives one deterministically.',
  ),
  /**
   * What to do. `redrive` (default): sample, verify, then ramped move task. `sample-only`: stop
   * after the verified sample. `dry-run`: plan and preflight only, nothing moves.
   * @default 'redrive'
   */
  mode: optionalField(
    z.enum(REDRIVE_MODES, {
      error: (issue) => `must be one of ${REDRIVE_MODES.join(', ')}${given(issue)}`,
    }),
    'redrive (default) | sample-only | dry-run (nothing moves).',
  ),
  /**
   * A custom destination queue ARN for every message. Default: omitted, so each message goes back
   * to the source queue it was dead-lettered from (DeadLetterQueueSourceArn). Must be the
   * same queue type (FIFO or standard) as the DLQ and not the DLQ itself.
   * @default undefined (each message returns to its own source queue)
   */
  destinationArn: optionalField(
    sqsArnField(),
    'Optional custom destination queue ARN. Default: each message returns to its own source queue. Same queue type as the DLQ.',
  ),
  /**
   * Allows a custom `destinationArn` even when the DLQ is shared by several source queues (their
   * messages would all go to the one destination). Only meaningful with `destinationArn`.
   * @default false
   */
  allowCustomDestinationForSharedDlq: optionalField(
    boolField(),
    'Override: allow destinationArn for a DLQ fed by several source queues. Needs destinationArn. Default false.',
  ),
  /**
   * Messages in the sample redrive, integer 1..100.
   * @default the queue registration's sampleSize (5)
   */
  sampleSize: optionalField(
    intField(1, MAX_SAMPLE_SIZE),
    'Messages redriven one by one and verified before the bulk move, 1..100. Default: registration (5).',
  ),
  /**
   * Rates of the ramped move task, messages per second: 1-10 integers, each 1..500, strictly
   * ascending, none above `maxRate`.
   * @default the queue registration's rampRates ([5, 50, 200])
   */
  rampRates: optionalField(
    z
      .array(intField(1, MAX_MOVE_RATE), {
        error: (issue) => `must be a list of integers 1..${MAX_MOVE_RATE}${given(issue)}`,
      })
      .check(
        z.minLength(1, { error: () => 'must list at least one rate' }),
        z.maxLength(MAX_RAMP_STEPS, { error: () => `must list at most ${MAX_RAMP_STEPS} rates` }),
        z.superRefine((rates: number[], ctx) => {
          if (rates.some((r, i) => i > 0 && r <= (rates[i - 1] ?? 0))) {
            ctx.addIssue({
              code: 'custom',
              input: rates,
              message: `must be strictly ascending, got ${show(rates)}`,
            });
          }
        }),
      ),
    'Move-task rates in messages/second, ascending, each 1..500. Default: registration ([5, 50, 200]).',
  ),
  /**
   * Highest move-task rate, messages per second, integer 1..500 (the StartMessageMoveTask cap).
   * Caps the registration's rampRates; given together with `rampRates`, no rate may exceed it.
   * @default the highest of rampRates
   */
  maxRate: optionalField(
    intField(1, MAX_MOVE_RATE),
    'Highest move-task rate in messages/second, 1..500. Caps rampRates.',
  ),
  /**
   * Seconds to dwell at each ramp step before the health gate, integer 1..3600.
   * @default the queue registration's dwellSeconds (60)
   */
  dwellSeconds: optionalField(
    intField(1, MAX_DWELL_SECONDS),
    'Seconds at each ramp step before the health gate, 1..3600. Default: registration (60).',
  ),
  /**
   * Seconds added to (source visibility timeout x maxReceiveCount) before the sample is verified,
   * integer 0..3600.
   * @default 30
   */
  verifyMarginSeconds: optionalField(
    intField(0, MAX_VERIFY_MARGIN_SECONDS),
    'Seconds added to visibility timeout x maxReceiveCount before verifying the sample, 0..3600. Default 30.',
  ),
  /**
   * Discard (delete, with a recorded decision) messages classified poison or permanent instead of
   * parking them.
   * @default false
   */
  discardPoison: optionalField(
    boolField(),
    'Delete poison/permanent messages (recorded) instead of parking them. Default false.',
  ),
  /**
   * Moves only the selected messages through the recording mover (selective redrive); the rest
   * stay in the DLQ with their envelopes. A selection that matches nothing is refused before any
   * side effect.
   * @default undefined (every message that may be redriven)
   */
  selection: optionalField(
    Selection,
    'Optional: only these messages (causes, classifications, attributes, body, messageIds; all must hold). Needs the recording mover.',
  ),
  /**
   * Brings this DLQ's parked messages (the parking queue) back to their source through the
   * recording mover, with their idempotency keys. Combine with `selection` to un-park a part.
   * @default false
   */
  unpark: optionalField(
    boolField(),
    "Un-park: move this DLQ's parked messages from the parking queue back to their source. Default false.",
  ),
  /**
   * Edit and resubmit: a JSON merge patch on the payload and/or attribute changes, applied to
   * each selected message; `reason` is required and audited.
   * @default undefined (messages are sent unchanged)
   */
  transform: optionalField(
    Transform,
    'Optional edit before resubmitting: { mergePatch?, setAttributes?, removeAttributes?, reason }. Audited.',
  ),
  /**
   * Who approved this redrive before starting it. Makes the start pre-approved (no Slack approval);
   * accepted only when the queue registration has `allowPreApproved: true`.
   */
  approvedBy: optionalField(
    textField(128),
    'Pre-approved start: who approved it. Only when the queue registration has allowPreApproved.',
  ),
  /**
   * Who started the execution (console user name, or `triage`).
   * @default 'console'
   */
  requestedBy: optionalField(
    textField(128),
    "Who started it (console user, or 'triage'). Default 'console'.",
  ),
  /**
   * The inventory this execution finishes before asking for approval (an inventory that spans
   * invocations, `DLQ#<dlqArn>` / `INVENTORY#<inventoryId>`). Triage sets it; a console start
   * omits it and redrives what earlier inventories stored. 1-128 printable characters.
   */
  inventoryId: optionalField(
    z.string({ error: (issue) => `must be a string of 1-128 printable characters${given(issue)}` }).check(
      z.regex(/^[\x21-\x7E]{1,128}$/, {
        error: (issue) => `must be 1-128 printable characters without spaces${given(issue)}`,
      }),
    ),
    'Set by triage: the inventory the workflow finishes (ContinueInventory) before the approval.',
  ),
  /**
   * History events one execution may use before it continues in a new execution, integer
   * 200..25,000. Lower values are for tests and local runs (the local runner enforces the same
   * limit).
   * @default 25000 (the Step Functions quota)
   */
  historyEventLimit: optionalField(
    intField(MIN_HISTORY_EVENT_LIMIT, HISTORY_EVENT_QUOTA),
    'History events per execution before it continues in a new one, 200..25000. Default 25000.',
  ),
  /**
   * Set by the workflow itself when it continues in a new execution: how many executions of this
   * run came before, integer 1..1000.
   */
  continuation: optionalField(
    intField(1, 1000),
    'Set by the workflow when it continues in a new execution: the executions before this one.',
  ),
};

const FIELDS = Object.keys(shape);

/** The problem text of a field that is not an execution input field. */
export function unknownField(key: string): string {
  const suggestion = suggestField(key, FIELDS);
  return `is not an execution input field${suggestion ? ` (did you mean ${suggestion}?)` : ''}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks that span fields. They run even when other fields are invalid, so every problem is
 * listed at once; each check looks only at fields that are themselves valid.
 */
function crossFieldChecks(value: Record<string, unknown>, ctx: z.core.$RefinementCtx): void {
  const dlq = typeof value.dlqArn === 'string' ? parseSqsArn(value.dlqArn) : undefined;
  const destinationArn = typeof value.destinationArn === 'string' ? value.destinationArn : undefined;
  const destination = destinationArn === undefined ? undefined : parseSqsArn(destinationArn);
  if (dlq && destination) {
    if (dlq.fifo !== destination.fifo) {
      ctx.addIssue({
        code: 'custom',
        path: ['destinationArn'],
        input: destinationArn,
        message: `queue types differ (FIFO vs standard): the DLQ is ${dlq.fifo ? 'FIFO' : 'standard'}, the destination is ${destination.fifo ? 'FIFO' : 'standard'}`,
      });
    }
    if (destinationArn === value.dlqArn) {
      ctx.addIssue({
        code: 'custom',
        path: ['destinationArn'],
        input: destinationArn,
        message: 'must differ from dlqArn (omit it to send each message back to its source queue)',
      });
    }
  }
  if (value.allowCustomDestinationForSharedDlq === true && value.destinationArn === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['allowCustomDestinationForSharedDlq'],
      input: true,
      message: 'only applies together with destinationArn',
    });
  }
  if (value.unpark === true && value.discardPoison === true) {
    ctx.addIssue({
      code: 'custom',
      path: ['discardPoison'],
      input: true,
      message:
        'does not apply to an un-park run (it parks and discards nothing: it sends parked messages back); omit it',
    });
  }
  const rates = value.rampRates;
  const maxRate = value.maxRate;
  if (Array.isArray(rates) && Number.isInteger(maxRate)) {
    const above = rates.filter((r): r is number => typeof r === 'number' && r > (maxRate as number));
    if (above.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['rampRates'],
        input: rates,
        message: `must not exceed maxRate ${String(maxRate)}, got ${show(above)}`,
      });
    }
  }
}

/**
 * The execution input schema (console or triage). Strict: an unknown field (a typo such as
 * `samplesize`) is a problem of its own, with a suggestion. Defaults are not applied here: they
 * come from the queue registration when ValidateInput builds the {@link ExecutionPlan}.
 *
 * @example
 * ```ts
 * const input = parseOrThrow(ExecutionInput, event, 'execution input'); // throws Redrive.InvalidInput
 * ```
 */
export const ExecutionInput = z
  .catchall(
    z.object(shape, {
      error: (issue) =>
        issue.code === 'invalid_type'
          ? `must be a JSON object with at least dlqArn${given(issue)}`
          : undefined,
    }),
    z.custom<never>(() => false, { error: (issue) => unknownField(String(issue.path?.at(-1))) }),
  )
  .check(
    z.superRefine(crossFieldChecks, { when: (payload) => isRecord(payload.value) }),
    z.describe('Input of a DLQ redrive execution (console or triage). Unknown fields are rejected.'),
  );

/** The parsed execution input. See {@link ExecutionInput} for units, ranges and defaults. */
export type ExecutionInput = z.output<z.ZodMiniObject<typeof shape>>;
