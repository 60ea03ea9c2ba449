/**
 * The pipeline's configuration: every environment variable a function reads, read and validated
 * once per Lambda container with zod. A bad value fails the invocation with
 * {@link ConfigurationError} (`Redrive.InvalidConfiguration`), listing every bad variable by name;
 * an empty variable counts as unset.
 *
 * Variables (CDK sets them; docs/contracts.md "Deployment"):
 * - `TABLE_NAME`: the DynamoDB table (3-255 of `A-Za-z0-9_.-`). @default 'dlq-redrive'
 * - `AWS_REGION`: the function's Region (set by Lambda). @default 'us-east-1'
 * - `AWS_LAMBDA_FUNCTION_NAME`: the function's own name (set by Lambda).
 * - `PARKING_QUEUE_URL`: the stack's parking queue (an http(s) URL).
 * - `STATE_MACHINE_ARN`: the redrive state machine (triage starts it).
 * - `APPROVAL_TIMEOUT_SECONDS`: the approval window, positive integer seconds (the ASL's
 *   `RequestApproval.TimeoutSeconds`).
 * - `REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS`: how long Park and SampleRedrive hide a message
 *   they transfer, 1..43200 seconds (SQS's visibility timeout range).
 * - `SLACK_SECRET_ARN` (JSON `{ botToken, signingSecret }`), or locally `SLACK_BOT_TOKEN` and
 *   `SLACK_SIGNING_SECRET`; `SLACK_DEFAULT_CHANNEL`; `SLACK_API_URL` (Web API base URL, default
 *   `https://slack.com/api/`); `SLACK_RESPONSE_URL_PREFIXES` (comma-separated, default
 *   `https://hooks.slack.com/`).
 * - `TRIAGE_MESSAGE_BUDGET` (most new envelopes per invocation of an inventory, default 5000),
 *   `TRIAGE_PAGE_BUDGET` (most messages one inventory holds in flight at once, across its
 *   invocations, 10..110000, default 110000: below SQS's ~120,000 in-flight limit; a deeper DLQ
 *   is inventoried as a sample), `TRIAGE_SAFETY_MARGIN_MS` (stop receiving with this much Lambda time left,
 *   default 15000), `ALARM_QUEUE_MAP` (JSON `{ "<alarm name or ARN>": ["<queue name>", ...] }` for
 *   alarms with no QueueName dimension).
 * - `PIPELINE_KEY_USERS`: JSON array of {@link KeyUser} (preflight's check of every queue's KMS
 *   key, docs/redrive-workflow.md); unset: the roles' use of keys is not simulated, key states still are.
 * - `REMOTE_ENDPOINTS`: JSON `{ "<account>/<region>": { "sqs": "<url>", "sns", "eventbridge",
 *   "lambda" } }`, endpoints of targets in other accounts and Regions off AWS (the
 *   SDK's `AWS_ENDPOINT_URL_<SERVICE>` cannot tell accounts apart). Unset on AWS.
 * *
 * AWS endpoints are not configuration of ours: the SDK reads its standard variables
 * (`AWS_ENDPOINT_URL_SQS`, ...), see clients.ts.
 *
 * @see https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
 */

import { ConfigurationError } from './errors.js';
import { formatIssues } from './middleware.js';
import { DEFAULT_TABLE_NAME } from './table.js';
import * as z from './zod.js';

const intFromEnv = (min: number, max: number) =>
  z
    .pipe(z.string().check(z.regex(/^\d+$/, `must be a whole number ${min}..${max}`)), z.transform(Number))
    .check(z.refine((n: number) => n >= min && n <= max, `must be a whole number ${min}..${max}`));

const JsonText = z.pipe(
  z.string(),
  z.transform((text: string, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.issues.push({ code: 'custom', message: 'must be JSON', input: text });
      return z.NEVER;
    }
  }),
);

// Numbers and the queue map are checked with refinements rather than z.coerce / z.record: the same
// rules without two more zod schema types in every bundle (about 7 KB minified, measured on park).
function isQueueMap(value: unknown): value is Record<string, string[]> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every(
      (queues) => Array.isArray(queues) && queues.every((q) => typeof q === 'string' && q !== ''),
    )
  );
}

/**
 * One pipeline role that uses queue keys: the function, its role ARN and the KMS actions it needs
 * on the key of each queue class (DLQ, redrive destination, parking queue). The stack writes the
 * list into preflight's `PIPELINE_KEY_USERS` from the function catalogue (packages/cdk/src/function-catalog.ts).
 */
export interface KeyUser {
  readonly function: string;
  readonly roleArn: string;
  readonly dlq: readonly string[];
  readonly destination: readonly string[];
  readonly parking: readonly string[];
}

function isKeyUsers(value: unknown): value is KeyUser[] {
  const actions = (a: unknown) =>
    Array.isArray(a) && a.every((x) => typeof x === 'string' && x.startsWith('kms:'));
  return (
    Array.isArray(value) &&
    value.every(
      (u) =>
        typeof u === 'object' &&
        u !== null &&
        typeof u.function === 'string' &&
        typeof u.roleArn === 'string' &&
        /^arn:aws[a-z-]*:iam::\d{12}:role\//.test(u.roleArn) &&
        actions(u.dlq) &&
        actions(u.destination) &&
        actions(u.parking),
    )
  );
}

/** A Step Functions state machine ARN, or an alias or version ARN of one (`...:stateMachine:<name>:<alias>`). */
export const STATE_MACHINE_ARN_PATTERN = /^arn:aws[a-z-]*:states:[^:]+:\d{12}:stateMachine:.+$/;

const HttpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

/** The services a per-account endpoint override may name. */
export const REMOTE_SERVICES = ['sqs', 'sns', 'eventbridge', 'lambda'] as const;
export type RemoteService = (typeof REMOTE_SERVICES)[number];

function isEndpointMap(value: unknown): value is Record<string, Partial<Record<RemoteService, string>>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.entries(value).every(
    ([scope, services]) =>
      /^\d{12}\/[a-z]{2}(-[a-z]+)+-\d$/.test(scope) &&
      typeof services === 'object' &&
      services !== null &&
      Object.entries(services).every(
        ([service, url]) =>
          (REMOTE_SERVICES as readonly string[]).includes(service) &&
          typeof url === 'string' &&
          /^https?:\/\/[^\s]+$/.test(url),
      ),
  );
}

/** The environment variables the pipeline reads, as zod checks them. */
const PipelineEnv = z.object({
  TABLE_NAME: z._default(
    z
      .string()
      .check(z.regex(/^[A-Za-z0-9_.-]{3,255}$/, 'must be a DynamoDB table name (3-255 of A-Za-z0-9_.-)')),
    DEFAULT_TABLE_NAME,
  ),
  AWS_REGION: z._default(z.string(), 'us-east-1'),
  AWS_LAMBDA_FUNCTION_NAME: z.optional(z.string()),
  PARKING_QUEUE_URL: z.optional(HttpUrl),
  STATE_MACHINE_ARN: z.optional(
    z.string().check(z.regex(STATE_MACHINE_ARN_PATTERN, 'must be a state machine ARN')),
  ),
  APPROVAL_TIMEOUT_SECONDS: z.optional(intFromEnv(1, 31_536_000)),
  REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS: z.optional(intFromEnv(1, 43_200)),
  SLACK_SECRET_ARN: z.optional(z.string()),
  SLACK_BOT_TOKEN: z.optional(z.string()),
  SLACK_SIGNING_SECRET: z.optional(z.string()),
  SLACK_DEFAULT_CHANNEL: z.optional(z.string()),
  SLACK_API_URL: z._default(HttpUrl, 'https://slack.com/api/'),
  SLACK_RESPONSE_URL_PREFIXES: z.optional(z.string()),
  TRIAGE_MESSAGE_BUDGET: z._default(intFromEnv(1, 1_000_000), 5000),
  TRIAGE_PAGE_BUDGET: z._default(intFromEnv(10, 110_000), 110_000),
  TRIAGE_SAFETY_MARGIN_MS: z._default(intFromEnv(0, 600_000), 15_000),
  ALARM_QUEUE_MAP: z._default(
    JsonText.check(
      z.refine(isQueueMap, 'must be a JSON object of alarm name or ARN -> array of queue names'),
    ),
    {},
  ),
  PIPELINE_KEY_USERS: z._default(
    JsonText.check(
      z.refine(
        isKeyUsers,
        'must be a JSON array of { function, roleArn (an IAM role ARN), dlq, destination, parking (kms:* action lists) }',
      ),
    ),
    [],
  ),
  REMOTE_ENDPOINTS: z._default(
    JsonText.check(
      z.refine(
        isEndpointMap,
        'must be a JSON object of "<account>/<region>" -> { sqs?, sns?, eventbridge?, lambda?: http(s) URL }',
      ),
    ),
    {},
  ),
});

/** The names of every variable {@link readConfig} reads. */
export const CONFIG_VARIABLES = Object.keys(PipelineEnv.shape) as ReadonlyArray<
  keyof typeof PipelineEnv.shape
>;

/** Slack settings (docs/slack.md). */
export interface SlackConfig {
  readonly secretArn: string | undefined;
  readonly botToken: string | undefined;
  readonly signingSecret: string | undefined;
  readonly defaultChannel: string | undefined;
  /** Web API base URL, ending in `/`. */
  readonly apiUrl: string;
  /** URL prefixes an interaction's `response_url` may start with. */
  readonly responseUrlPrefixes: readonly string[];
}

/** Triage's budgets and alarm map. */
export interface TriageSettings {
  readonly budgets: {
    readonly messageBudget: number;
    readonly pageBudget: number;
    /** Milliseconds. */
    readonly safetyMarginMs: number;
  };
  readonly alarmQueueMap: Readonly<Record<string, string[]>>;
}

/** The validated configuration (see the module comment for each variable). */
export interface PipelineConfig {
  readonly tableName: string;
  readonly region: string;
  readonly functionName: string | undefined;
  readonly parkingQueueUrl: string | undefined;
  readonly stateMachineArn: string | undefined;
  /** Seconds. */
  readonly approvalTimeoutSeconds: number | undefined;
  /** Seconds. */
  readonly receiveVisibilityTimeoutSeconds: number | undefined;
  readonly slack: SlackConfig;
  readonly triage: TriageSettings;
  /** The pipeline roles preflight checks against each queue's KMS key (`PIPELINE_KEY_USERS`). */
  readonly keyUsers: readonly KeyUser[];
  /**
   * Endpoints of other accounts and Regions, by `<account>/<region>` and service (off AWS: the
   * SDK's endpoint variables are per service, not per account). Empty on AWS.
   */
  readonly remoteEndpoints: Readonly<Record<string, Partial<Record<RemoteService, string>>>>;
}

/**
 * Reads and validates the configuration from `env` (no caching: tests pass their own object).
 *
 * @throws ConfigurationError listing every bad variable, e.g. `TRIAGE_PAGE_BUDGET: ...`.
 */
export function readConfig(env: Readonly<Record<string, string | undefined>> = process.env): PipelineConfig {
  const raw = Object.fromEntries(CONFIG_VARIABLES.map((name) => [name, env[name] || undefined]));
  const result = PipelineEnv.safeParse(raw);
  if (!result.success) throw new ConfigurationError(formatIssues(result.error), result.error);
  const e = result.data;
  return {
    tableName: e.TABLE_NAME,
    region: e.AWS_REGION,
    functionName: e.AWS_LAMBDA_FUNCTION_NAME,
    parkingQueueUrl: e.PARKING_QUEUE_URL,
    stateMachineArn: e.STATE_MACHINE_ARN,
    approvalTimeoutSeconds: e.APPROVAL_TIMEOUT_SECONDS,
    receiveVisibilityTimeoutSeconds: e.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS,
    slack: {
      secretArn: e.SLACK_SECRET_ARN,
      botToken: e.SLACK_BOT_TOKEN,
      signingSecret: e.SLACK_SIGNING_SECRET,
      defaultChannel: e.SLACK_DEFAULT_CHANNEL,
      apiUrl: e.SLACK_API_URL,
      responseUrlPrefixes: e.SLACK_RESPONSE_URL_PREFIXES?.split(',')
        .map((p) => p.trim())
        .filter((p) => p !== '') ?? ['https://hooks.slack.com/'],
    },
    triage: {
      budgets: {
        messageBudget: e.TRIAGE_MESSAGE_BUDGET,
        pageBudget: e.TRIAGE_PAGE_BUDGET,
        safetyMarginMs: e.TRIAGE_SAFETY_MARGIN_MS,
      },
      // Checked by isQueueMap (a zod/mini refinement does not narrow the output type).
      alarmQueueMap: e.ALARM_QUEUE_MAP as Record<string, string[]>,
    },
    // Checked by isKeyUsers.
    keyUsers: e.PIPELINE_KEY_USERS as KeyUser[],
    remoteEndpoints: e.REMOTE_ENDPOINTS as Record<string, Partial<Record<RemoteService, string>>>,
  };
}

let cached: PipelineConfig | undefined;

/**
 * The container's configuration: {@link readConfig} of `process.env`, read once and reused
 * across invocations. A failed read is not cached.
 *
 * @throws ConfigurationError listing every bad variable.
 */
export function pipelineConfig(): PipelineConfig {
  cached ??= readConfig();
  return cached;
}

/** Forgets the cached configuration; `resetClients()` (clients.ts) calls it. */
export function resetConfig(): void {
  cached = undefined;
}

/**
 * What every function's dependency builder (`functions/<name>/deps.ts`) takes: the configuration
 * and ports that replace the built ones (tests, the local runner).
 */
export interface DepsOptions<D> {
  /** @default pipelineConfig() */
  readonly config?: PipelineConfig;
  /** Ports used instead of the ones the builder would make. */
  readonly overrides?: Partial<D>;
}
