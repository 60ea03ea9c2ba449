/**
 * The plan of a redrive execution (`$.plan`, written by ValidateInput from the
 * {@link ./execution-input.ts | execution input} and the queue registration) and the parts of the
 * input it carries on: the {@link Selection} and the {@link Transform}, with the field builders
 * they share with the input schema. Every task after ValidateInput parses `$.plan` with
 * {@link ExecutionPlan}.
 *
 * Apart from execution-input.ts so that the functions that read the plan do not bundle the input
 * schema they never run (its fields, messages and cross-field checks: 6.8 KB of each of those
 * bundles, measured with esbuild's metafile; docs/bundles.md).
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/input-output-inputpath-params.html
 */
import { Classification } from '#inventory/model.js';
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
/**
 * Step Functions' quota of history events per Standard execution; an execution near it continues
 * in a new one (docs/redrive-workflow.md "Long runs").
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html
 */
export const HISTORY_EVENT_QUOTA = 25_000;
/** The lowest `historyEventLimit` an input may ask for (tests use low limits to see a continuation). */
export const MIN_HISTORY_EVENT_LIMIT = 200;

export { parseSqsArn, SQS_QUEUE_ARN_PATTERN, type SqsArn } from '@dlq-redrive/contract';

/** A value as shown in an error message: JSON, cut to 60 characters. */
export function show(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** `, got <value>`: the tail of a problem that names the value given. */
export function given(issue: { input?: unknown }): string {
  return `, got ${show(issue.input)}`;
}

/**
 * Characters that change how text around them is displayed or that no UTF-8 encoder can keep:
 * U+0080-U+009F controls, format characters (bidirectional overrides such as U+202E, zero-width spaces),
 * unpaired surrogates and the line/paragraph separators. A name shown in the Slack approval and
 * the report ("approved by ...") must read as what it is.
 */
const INVISIBLE_OR_UNENCODABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

/**
 * A non-blank string without control characters, at most `max` characters.
 * @param whenMissing - the problem when the field is absent (a required field's own words).
 */
export function textField(max: number, whenMissing?: string) {
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

/** Most entries of each selection list (causes, classifications, attribute and body conditions). */
export const MAX_SELECTION_ENTRIES = 50;
/** Most DLQ MessageIds a selection may name. */
export const MAX_SELECTED_MESSAGE_IDS = 1000;
/** Most attributes a transform may set or remove (SQS allows 10 per message). */
export const MAX_TRANSFORM_ATTRIBUTES = 10;

/**
 * Message attribute names a transform may not set or remove: the pipeline's own (it writes them on
 * every copy), the FIFO system attributes (changing a group id would reorder the group) and
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

/** The field of `fields` a misspelt key probably meant, if any. */
export function suggestField(key: string, fields: readonly string[]): string | undefined {
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
  /** The shared-DLQ destination override, copied from the input; absent means false (docs/contracts.md). */
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
  /** The inventory the workflow finishes before the approval (`ContinueInventory`); null: none. */
  inventoryId: z._default(z.nullable(z.string()), null),
  /** History events one execution may use before it continues in a new one. */
  historyEventLimit: z._default(
    z.number().check(z.int(), z.gte(MIN_HISTORY_EVENT_LIMIT), z.lte(HISTORY_EVENT_QUOTA)),
    HISTORY_EVENT_QUOTA,
  ),
  /** Executions of this run before this one (0: the first). */
  continuation: z._default(z.number().check(z.int(), z.gte(0)), 0),
});
export type ExecutionPlan = z.infer<typeof ExecutionPlan>;

/** The run that owns this execution's ledger entries (`plan.runId`, else the incident id). */
export function runIdOf(plan: Pick<ExecutionPlan, 'runId' | 'incidentId'>): string {
  return plan.runId ?? plan.incidentId;
}
