/**
 * The input of a redrive execution, whoever starts it: triage (after an alarm) or an operator in
 * the Step Functions console. `ValidateInput`, the first state, parses it with
 * {@link ExecutionInput} before anything else happens and turns it into an {@link ExecutionPlan}
 * (`$.plan`). `statemachines/execution-input.schema.json` is generated from this schema
 * (`npm run schemas`), never edited by hand.
 *
 * Every problem is reported at once, each naming its field (case C20):
 * `dlqArn: is required`, `dlqArn: must be an SQS ARN, got a queue URL (use arn:aws:sqs:...)`,
 * `maxRate: must be an integer 1..500, got "fifty"`, `sampleSize: must be >= 1 ...`,
 * `mode: must be one of redrive, sample-only, dry-run, got "delete-all"`,
 * `samplesize: is not an execution input field (did you mean sampleSize?)`.
 *
 * The input must carry no random or time-of-call fields: a retried start must send byte-identical
 * input to be idempotent (case C19), so nothing here is a timestamp or a generated id.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
 */
import { Classification } from '#inventory/model.js';
import { parseSqsArn, SQS_QUEUE_ARN_PATTERN } from '#platform/sqs-arn.js';
import * as z from '#platform/zod.js';

/** What an execution may do. `redrive`: sample, verify, then ramped move task. */
export const REDRIVE_MODES = ['redrive', 'sample-only', 'dry-run'] as const;
export type RedriveMode = (typeof REDRIVE_MODES)[number];

/** StartMessageMoveTask's cap, messages per second. */
export const MAX_MOVE_RATE = 500;
/** Upper bound of a sample: each sampled message is one receive/send/delete round trip. */
export const MAX_SAMPLE_SIZE = 100;
/** Longest dwell per ramp step, seconds. */
export const MAX_DWELL_SECONDS = 3600;
/** Longest verification margin, seconds. */
export const MAX_VERIFY_MARGIN_SECONDS = 3600;
/** Most ramp steps: each step costs a few state transitions and at least one dwell. */
export const MAX_RAMP_STEPS = 10;
/** Default verification margin added to visibility timeout x maxReceiveCount, seconds. */
export const DEFAULT_VERIFY_MARGIN_SECONDS = 30;

export { parseSqsArn, SQS_QUEUE_ARN_PATTERN, type SqsArn } from '#platform/sqs-arn.js';

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

/** A value as shown in an error message: JSON, cut to 60 characters. */
function show(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function given(issue: { input?: unknown }): string {
  return `, got ${show(issue.input)}`;
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

/**
 * Characters that change how text around them is displayed or that no UTF-8 encoder can keep:
 * C1 controls, format characters (bidirectional overrides such as U+202E, zero-width spaces),
 * unpaired surrogates and the line/paragraph separators. A name shown in the Slack approval and
 * the report ("approved by ...") must read as what it is.
 */
const INVISIBLE_OR_UNENCODABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

/**
 * A non-blank string without control characters, at most `max` characters.
 * @param whenMissing - the problem when the field is absent (a required field's own words).
 */
function textField(max: number, whenMissing?: string) {
  const rule = `must be a non-blank string of at most ${max} characters, without control characters`;
  return z
    .string({
      error: (issue) => (issue.input === undefined && whenMissing ? whenMissing : `${rule}${given(issue)}`),
    })
    .check(
      z.regex(new RegExp(`^(?=.*\\S)[^\\x00-\\x1F\\x7F]{1,${max}}$`), {
        error: (issue) => `${rule}${given(issue)}`,
      }),
      z.refine((text) => !INVISIBLE_OR_UNENCODABLE.test(text), {
        error: (issue) =>
          `${rule} (no bidirectional overrides, zero-width or other format characters, or unpaired surrogates)${given(issue)}`,
      }),
    );
}

function boolField() {
  return z.boolean({ error: (issue) => `must be true or false${given(issue)}` });
}

/** An optional field with its description (the generated JSON Schema carries it). */
function optionalField<T extends z.ZodMiniType>(schema: T, description: string) {
  return z.optional(schema).check(z.describe(description));
}

/** Most entries of each selection list (causes, classifications, attribute and body conditions). */
export const MAX_SELECTION_ENTRIES = 50;
/** Most DLQ MessageIds a selection may name. */
export const MAX_SELECTED_MESSAGE_IDS = 1000;
/** Most attributes a transform may set or remove (SQS allows 10 per message). */
export const MAX_TRANSFORM_ATTRIBUTES = 10;

/**
 * Message attribute names a transform may not set or remove: the pipeline's own (it writes them on
 * every copy), the FIFO system attributes (changing a group id would reorder the group, C08) and
 * the names SQS reserves.
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html
 */
export const PROTECTED_ATTRIBUTES = [
  'redrive-count',
  'redrive-id',
  'idempotency-key',
  'redrive-edit-of',
  'MessageGroupId',
  'MessageDeduplicationId',
] as const;

/** A list of 1..max entries; each violation names the bound and the value given. */
function listField<T extends z.ZodMiniType>(item: T, max: number, what: string) {
  return z
    .array(item, { error: (issue) => `must be a list of ${what}${given(issue)}` })
    .check(
      z.minLength(1, { error: () => `must list at least one ${what.replace(/s$/, '')}` }),
      z.maxLength(max, { error: () => `must list at most ${max} ${what}` }),
    );
}

/** A strict object whose unknown keys are each a problem naming the key and the known ones. */
function strictShape<S extends z.core.$ZodLooseShape>(objectShape: S, what: string) {
  const fields = Object.keys(objectShape);
  const known = fields.join(', ');
  return z.catchall(
    z.object(objectShape, {
      error: (issue) =>
        issue.code === 'invalid_type' ? `must be a JSON object (${what})${given(issue)}` : undefined,
    }),
    z.custom<never>(() => false, {
      error: (issue) => {
        const suggestion = suggestField(String(issue.path?.at(-1)), fields);
        return `is not a field of ${what} (${suggestion ? `did you mean ${suggestion}?` : `known: ${known}`})`;
      },
    }),
  );
}

/** A plain JSON object (not an array, not null). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A message attribute name as SQS allows it: 1-256 of `A-Za-z0-9_-.`, not starting with `AWS.`/`Amazon.`. */
const ATTRIBUTE_NAME = /^(?!\.)(?!.*\.\.)(?!.*\.$)(?!(?:AWS|Amazon)\.)[A-Za-z0-9_.-]{1,256}$/i;
function attributeNameField() {
  return z.string({ error: (issue) => `must be a message attribute name${given(issue)}` }).check(
    z.regex(ATTRIBUTE_NAME, {
      error: (issue) =>
        `must be a message attribute name (1-256 of A-Za-z0-9_-., not starting with AWS. or Amazon.)${given(issue)}`,
    }),
  );
}

/** A dotted JSON path into the payload: `$.a.b`, `$.items.0.sku`. */
const JSON_PATH = /^\$(\.[A-Za-z0-9_-]+)+$/;
function jsonPathField() {
  return z
    .string({ error: (issue) => `must be a JSON path like $.a.b${given(issue)}` })
    .check(z.regex(JSON_PATH, { error: (issue) => `must be a JSON path like $.a.b${given(issue)}` }));
}

/** A JSON scalar a condition compares with (strictly: "1" is not 1). */
function scalarField() {
  return z.union([z.string(), z.number(), z.boolean(), z.null()], {
    error: (issue) => `must be a string, number, boolean or null${given(issue)}`,
  });
}

/**
 * Which messages a run moves (selective redrive, un-park; docs/contracts.md "The recording mover").
 * Every given criterion must hold (AND); within a list any entry may match (OR). Messages not
 * selected stay where they are, with their envelopes. A selection needs the recording mover: a
 * move task cannot filter.
 */
export const Selection = strictShape(
  {
    /**
     * Cause groups of the incident: a fingerprint (`IncidentSummary.causes[].fingerprint`, as
     * `dlq show` lists them) or an error class (every group of that class).
     */
    causes: z.optional(listField(textField(5000), MAX_SELECTION_ENTRIES, 'causes')),
    /** Message classifications (transient, permanent, poison, systemic, unknown). */
    classifications: z.optional(
      listField(
        z.enum(Classification.options, {
          error: (issue) => `must be one of ${Classification.options.join(', ')}${given(issue)}`,
        }),
        Classification.options.length,
        'classifications',
      ),
    ),
    /**
     * Message attributes that must equal a string: SQS message attributes, else the SNS attributes
     * of a non-raw SNS body.
     */
    attributes: z.optional(
      listField(
        strictShape({ name: attributeNameField(), equals: textField(1024) }, 'an attribute condition'),
        MAX_SELECTION_ENTRIES,
        'attribute conditions',
      ),
    ),
    /**
     * Conditions on the payload (the body; for a non-raw SNS body its `Message`; for a Lambda
     * on-failure record its `requestPayload`): the JSON value at `jsonPath` equals `equals`.
     */
    body: z.optional(
      listField(
        strictShape({ jsonPath: jsonPathField(), equals: scalarField() }, 'a body condition'),
        MAX_SELECTION_ENTRIES,
        'body conditions',
      ),
    ),
    /** DLQ MessageIds of envelopes of the incident (as `dlq envelopes` lists them). */
    messageIds: z.optional(
      listField(
        z
          .string({ error: (issue) => `must be a DLQ MessageId${given(issue)}` })
          .check(
            z.regex(/^[\x21-\x7E]{1,128}$/, { error: (issue) => `must be a DLQ MessageId${given(issue)}` }),
          ),
        MAX_SELECTED_MESSAGE_IDS,
        'message ids',
      ),
    ),
  },
  'selection',
).check(
  z.refine((s) => Object.values(s).some((v) => v !== undefined), {
    error: () => 'must give at least one of causes, classifications, attributes, body, messageIds',
  }),
);
export type Selection = z.output<typeof Selection>;

/**
 * An edit applied to each selected message before it is resubmitted (edit and resubmit). The
 * envelope keeps the original bytes; the copy carries `redrive-edit-of`; the incident records who
 * changed what and when. Refused before anything moves when a selected body is not JSON (for a
 * merge patch), when it would change a FIFO group id, or when an edited copy exceeds its target's
 * size limit.
 */
export const Transform = strictShape(
  {
    /** An RFC 7396 JSON merge patch applied to the payload (must be a JSON object). */
    mergePatch: z.optional(
      z.custom<Record<string, unknown>>(isPlainObject, {
        error: (issue) => `must be a JSON object (an RFC 7396 merge patch)${given(issue)}`,
      }),
    ),
    /** Message attributes to add or replace (String unless `dataType` says otherwise). */
    setAttributes: z.optional(
      listField(
        strictShape(
          {
            name: attributeNameField(),
            value: textField(1024),
            dataType: z.optional(
              z.string().check(
                z.regex(/^(String|Number)(\.[A-Za-z0-9_-]{1,200})?$/, {
                  error: (issue) => `must be String or Number (with an optional .suffix)${given(issue)}`,
                }),
              ),
            ),
          },
          'an attribute to set',
        ),
        MAX_TRANSFORM_ATTRIBUTES,
        'attributes',
      ),
    ),
    /** Message attributes to remove. */
    removeAttributes: z.optional(
      listField(attributeNameField(), MAX_TRANSFORM_ATTRIBUTES, 'attribute names'),
    ),
    /** Why the messages are edited (kept in the incident's audit record). Required. */
    reason: textField(500, 'is required: say why the messages are edited (audited)'),
  },
  'transform',
).check(
  z.superRefine((t, ctx) => {
    if (t.mergePatch === undefined && t.setAttributes === undefined && t.removeAttributes === undefined)
      ctx.addIssue({
        code: 'custom',
        input: t,
        message: 'must give at least one of mergePatch, setAttributes, removeAttributes',
      });
    const names = [...(t.setAttributes ?? []).map((a) => a.name), ...(t.removeAttributes ?? [])];
    for (const name of names) {
      if (!(PROTECTED_ATTRIBUTES as readonly string[]).includes(name)) continue;
      ctx.addIssue({
        code: 'custom',
        input: name,
        message: name.startsWith('Message')
          ? `may not change ${name}: changing a FIFO message's group or deduplication id would reorder or drop it`
          : `may not change ${name}: the pipeline writes it on every copy`,
      });
    }
  }),
);
export type Transform = z.output<typeof Transform>;

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
   * to the source queue it was dead-lettered from (DeadLetterQueueSourceArn; case C07). Must be the
   * same queue type (FIFO or standard) as the DLQ (case C08) and not the DLQ itself.
   * @default undefined (each message returns to its own source queue)
   */
  destinationArn: optionalField(
    sqsArnField(),
    'Optional custom destination queue ARN. Default: each message returns to its own source queue. Same queue type as the DLQ.',
  ),
  /**
   * Allows a custom `destinationArn` even when the DLQ is shared by several source queues (their
   * messages would all go to the one destination; case C07). Only meaningful with `destinationArn`.
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
};

const FIELDS = Object.keys(shape);

/** Edit distance, for "did you mean" on misspelt field names. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j] ?? 0;
      row[j] = Math.min(above + 1, (row[j - 1] ?? 0) + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length] ?? 0;
}

/** The known field a misspelt key probably meant, if any (of the execution input, or of `fields`). */
export function suggestField(key: string, fields: readonly string[] = FIELDS): string | undefined {
  const folded = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  const exact = fields.find((f) => f.toLowerCase() === folded);
  if (exact) return exact;
  let best: { field: string; d: number } | undefined;
  for (const field of fields) {
    const d = distance(folded, field.toLowerCase());
    if (d <= 2 && (!best || d < best.d)) best = { field, d };
  }
  return best?.field;
}

/** The problem text of a field that is not an execution input field. */
export function unknownField(key: string): string {
  const suggestion = suggestField(key);
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

/**
 * The normalised, validated plan ValidateInput writes to `$.plan` (docs/contracts.md). Every field
 * is present; defaults from the queue registration are applied. Later tasks parse it with this
 * schema.
 */
export const ExecutionPlan = z.strictObject({
  incidentId: z.string().check(z.minLength(1)),
  dlqArn: z.string(),
  /** Queue URL of the DLQ, resolved with GetQueueUrl. */
  dlqUrl: z.string(),
  mode: z.enum(REDRIVE_MODES),
  /** Custom destination; null: each message returns to its own source queue. */
  destinationArn: z.nullable(z.string()),
  /** The C07 override, copied from the input; absent means false (docs/contracts.md). */
  allowCustomDestinationForSharedDlq: z._default(z.boolean(), false),
  sampleSize: z.number().check(z.int(), z.gte(1), z.lte(MAX_SAMPLE_SIZE)),
  /** Messages per second, ascending, each 1..500, capped by maxRate. */
  rampRates: z.array(z.number().check(z.int(), z.gte(1), z.lte(MAX_MOVE_RATE))).check(z.minLength(1)),
  /** Seconds. */
  dwellSeconds: z.number().check(z.int(), z.gte(1)),
  /** Seconds. */
  verifyMarginSeconds: z.number().check(z.int(), z.gte(0)),
  discardPoison: z.boolean(),
  /** True when `approvedBy` was given and the registration allows pre-approved starts. */
  preApproved: z.boolean(),
  approvedBy: z.nullable(z.string()),
  requestedBy: z.string(),
  /** Where parked messages go; null when neither the registration nor PARKING_QUEUE_URL names one. */
  parkingQueueUrl: z.nullable(z.string()),
  /** Redrive count at which a message is parked instead of redriven (registration). */
  maxRedrives: z.number().check(z.int(), z.gte(1)),
  /** The input's selection; null or absent: every message that may be redriven. */
  selection: z.optional(z.nullable(Selection)),
  /** True: read the parking queue instead of the DLQ (un-park); absent = false. */
  unpark: z.optional(z.boolean()),
  /** The input's edit; null or absent: copies are sent unchanged. */
  transform: z.optional(z.nullable(Transform)),
  /**
   * This execution's run of the incident: the owner of its redrive ledger entries. Lambda
   * retries of a step share it; a console restart is another run of the same incident.
   * Absent (a direct invocation, an older plan): the incident id stands in for it.
   */
  runId: z.optional(z.string().check(z.minLength(1))),
});
export type ExecutionPlan = z.infer<typeof ExecutionPlan>;

/** The run that owns this execution's ledger entries (`plan.runId`, else the incident id). */
export function runIdOf(plan: Pick<ExecutionPlan, 'runId' | 'incidentId'>): string {
  return plan.runId ?? plan.incidentId;
}
