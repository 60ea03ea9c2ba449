/**
 * An inventory that spans Lambda invocations (docs/triage.md "Inventory on the engine"): triage
 * runs the first step within its own budget; when that stops on its message budget or the
 * Lambda's time, the redrive workflow's `ContinueInventory` loop runs the next steps, each a
 * bounded invocation, until the DLQ is inventoried. Only then is approval requested.
 *
 * SQS has no cursor: the only way to see every message of a standard queue is to keep the ones
 * already seen invisible. So a session **holds** what it has received across invocations:
 *
 * - every receive hides its messages until the session's plan ends (`holdUntil`): the time the
 *   rest of the DLQ needs at the rate measured so far, with a margin, never more; when the rate
 *   drops so that the plan would run out, the held messages are extended (ChangeMessageVisibility)
 *   to a new plan, which is counted (`extensions`);
 * - receipt handles go to hold pages in DynamoDB (`DLQ#<dlqArn>` / `HOLD#<inventoryId>#<seq>`), a
 *   thousand at a time, so no invocation keeps more than its own in memory;
 * - at most `holdLimit` messages are held at once (default 110,000 for a standard queue, below
 *   SQS's ~120,000 in-flight limit; 18,000 FIFO): a DLQ deeper than that is inventoried as a
 *   **sample**, the first `holdLimit` messages SQS returned (`sampled: true`), and the rest is
 *   left unseen (docs/contracts.md "Messages triage could not see");
 * - at the end every held message is released (ChangeMessageVisibilityBatch 0, page by page,
 *   resumable across invocations), so the DLQ holds exactly what it held before.
 *
 * A crashed invocation loses only the receipt handles it had not recorded yet: the messages whose
 * envelopes it had not written are released by its `finally`, and the few it wrote but did not
 * record stay invisible until `holdUntil` at the latest.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { isConditionalCheckFailed, StateConflictError } from '#platform/errors.js';
import { readShape, recordFields, shapeOf } from '#platform/record-shapes.js';
import type { QueueInfo, SqsQueues } from '#platform/sqs-queues.js';
import { keys } from '#platform/table.js';
import type { EnvelopeStore } from './envelope-store.js';
import {
  type InventoryBudgets,
  type InventoryResult,
  inventoryDlq,
  SQS_FIFO_IN_FLIGHT_LIMIT,
  SQS_IN_FLIGHT_LIMIT,
  type StopReason,
} from './inventory.js';
import type { InventoryCoverage, QueueRegistration } from './model.js';
import {
  addToSummary,
  emptySummary,
  finishSummary,
  mergeSummaries,
  type PartialSummary,
  type SummaryResult,
} from './summary.js';

/** Where a session stands. */
export type SessionStatus = 'RUNNING' | 'RELEASING' | 'COMPLETE';

/** An inventory session (`DLQ#<dlqArn>` / `INVENTORY#<inventoryId>`). Times are epoch milliseconds. */
export interface InventorySession {
  dlqArn: string;
  dlqUrl: string;
  /** The session's id: the incident's id (one triage inventory per incident). */
  inventoryId: string;
  incidentId: string;
  /** Owner of the DLQ's inventory lease (`DLQ#<dlqArn>` / `INVENTORY`): the alarm transition. */
  leaseOwner: string;
  status: SessionStatus;
  startedAt: number;
  /** Held messages are invisible until then (the plan). */
  holdUntil: number;
  /** Visible + in-flight messages of the DLQ when the session started. */
  depthAtStart: number;
  /** Messages inventoried (distinct, duplicate deliveries excluded). */
  inventoried: number;
  /** Envelopes created (the rest existed from an earlier incident). */
  created: number;
  /** Messages held invisible now. */
  held: number;
  /** Hold pages written (`seq` 0 .. holdPages - 1) and released (in order). */
  holdPages: number;
  releasedPages: number;
  /** Invocations (steps) so far. */
  invocations: number;
  /** Time spent receiving and storing, milliseconds (the measured rate is inventoried / activeMs). */
  activeMs: number;
  /** Times the held messages were extended to a longer plan. */
  extensions: number;
  /** Why the last step stopped. */
  stopReason: StopReason | null;
  /** Most messages held invisible at once (set when the session starts). */
  holdLimit: number;
  /** True when the DLQ was deeper than `holdLimit`: the inventory is the first messages SQS returned. */
  sampled: boolean;
  /** Receipt handles whose release failed (those messages reappear at `holdUntil`). */
  releaseFailures: number;
  summary: PartialSummary;
  warnings: string[];
  /** Optimistic concurrency: each save increments it. */
  version: number;
  updatedAt: string;
}

/** The session store. */
export interface InventorySessionStore {
  get(dlqArn: string, inventoryId: string): Promise<InventorySession | undefined>;
  /** Conditional create; false when the session exists already. */
  create(session: InventorySession): Promise<boolean>;
  /**
   * Saves the session if nobody saved it since it was read (its `version`), incrementing `version`.
   * @throws StateConflictError when another invocation saved it meanwhile.
   */
  save(session: InventorySession): Promise<InventorySession>;
  putHoldPage(dlqArn: string, inventoryId: string, seq: number, handles: readonly string[]): Promise<void>;
  /** Hold pages from `fromSeq` on, in order. */
  holdPages(
    dlqArn: string,
    inventoryId: string,
    fromSeq: number,
  ): AsyncIterable<{ seq: number; handles: string[] }>;
  deleteHoldPage(dlqArn: string, inventoryId: string, seq: number): Promise<void>;
}

/** What a redrive needs to know of a finished inventory: whether it is a sample, and of what. */
export type InventoryCoverageRead = Pick<InventorySession, 'sampled' | 'inventoried' | 'depthAtStart'>;

/**
 * Reads a session's coverage only (one GetItem with a projection): the reader Preflight links
 * instead of the whole store, to keep its bundle small.
 */
export function createCoverageReader(options: { client?: DynamoDBDocumentClient; tableName?: string } = {}): {
  get(dlqArn: string, inventoryId: string): Promise<InventoryCoverageRead | undefined>;
} {
  return {
    async get(dlqArn, inventoryId) {
      const out = await (options.client ?? documentClient()).send(
        new GetCommand({
          TableName: options.tableName ?? pipelineConfig().tableName,
          Key: { pk: keys.dlq(dlqArn), sk: keys.inventorySession(inventoryId) },
          ProjectionExpression: 'sampled, inventoried, depthAtStart',
          ConsistentRead: true,
        }),
      );
      return out.Item as InventoryCoverageRead | undefined;
    },
  };
}

/** An inventory session nobody is running any more (see {@link createAbandonedSessionFinder}). */
export interface AbandonedSession {
  inventoryId: string;
  incidentId: string;
  status: Exclude<SessionStatus, 'COMPLETE'>;
}

/**
 * Finds the DLQ's abandoned inventory session: one not COMPLETE while the DLQ's inventory lease
 * (`DLQ#<dlqArn>` / `INVENTORY`) is free or expired, so no triage and no `ContinueInventory` step
 * is running it. That is what a triage that crashed or timed out mid-scan leaves: its received
 * messages held invisible until `holdUntil`, the receipt handles it recorded in hold pages. A
 * console start takes it over (ValidateInput puts its ids in the plan), so the workflow's
 * inventory loop releases or continues the hold pages and waits the unrecorded messages out,
 * instead of a redrive that cannot see them (docs/console.md "After a crashed triage").
 *
 * One consistent Query of `begins_with(sk, 'INVENTORY')` reads the lease and the sessions together;
 * the newest unfinished session wins.
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Query.html
 */
export function createAbandonedSessionFinder(
  options: { client?: DynamoDBDocumentClient; tableName?: string } = {},
): { find(dlqArn: string, nowMs: number): Promise<AbandonedSession | undefined> } {
  return {
    async find(dlqArn, nowMs) {
      let lease: { leaseExpiresAt?: unknown } | undefined;
      let newest: (AbandonedSession & { startedAt: number }) | undefined;
      let start: Record<string, unknown> | undefined;
      do {
        const out = await (options.client ?? documentClient()).send(
          new QueryCommand({
            TableName: options.tableName ?? pipelineConfig().tableName,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :inventory)',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':pk': keys.dlq(dlqArn), ':inventory': 'INVENTORY' },
            ProjectionExpression: 'sk, inventoryId, incidentId, #status, startedAt, leaseExpiresAt',
            ConsistentRead: true,
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        );
        for (const item of out.Items ?? []) {
          if (item.sk === 'INVENTORY') lease = item;
          else if (
            item.status !== 'COMPLETE' &&
            typeof item.inventoryId === 'string' &&
            (!newest || Number(item.startedAt) > newest.startedAt)
          )
            newest = {
              inventoryId: item.inventoryId,
              incidentId: String(item.incidentId ?? item.inventoryId),
              status: item.status as AbandonedSession['status'],
              startedAt: Number(item.startedAt),
            };
        }
        start = out.LastEvaluatedKey;
      } while (start);
      if (!newest || Number(lease?.leaseExpiresAt ?? 0) >= nowMs) return undefined;
      const { startedAt: _startedAt, ...session } = newest;
      return session;
    },
  };
}

/**
 * Creates the session store on the pipeline table.
 * @param options.client - @default the shared document client
 * @param options.tableName - @default pipelineConfig().tableName
 */
export function createInventorySessionStore(
  options: { client?: DynamoDBDocumentClient; tableName?: string } = {},
): InventorySessionStore {
  const client = () => options.client ?? documentClient();
  const table = options.tableName ?? pipelineConfig().tableName;
  const sessionKey = (dlqArn: string, id: string) => ({
    pk: keys.dlq(dlqArn),
    sk: keys.inventorySession(id),
  });
  /** The session's item: its key, entity and shape version beside its own fields. */
  const sessionItem = (session: InventorySession) => ({
    ...sessionKey(session.dlqArn, session.inventoryId),
    entity: 'inventory-session',
    ...shapeOf('inventory-session'),
    ...session,
  });
  const strip = (item: Record<string, unknown>) =>
    recordFields<InventorySession>(
      'inventory-session',
      item,
      `inventory session ${String(item.inventoryId)} of ${String(item.dlqArn)}`,
    );
  return {
    async get(dlqArn, inventoryId) {
      const out = await client().send(
        new GetCommand({ TableName: table, Key: sessionKey(dlqArn, inventoryId), ConsistentRead: true }),
      );
      return out.Item ? strip(out.Item) : undefined;
    },
    async create(session) {
      try {
        await client().send(
          new PutCommand({
            TableName: table,
            Item: sessionItem(session),
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return false;
        throw error;
      }
    },
    async save(session) {
      const next = { ...session, version: session.version + 1, updatedAt: new Date().toISOString() };
      try {
        await client().send(
          new PutCommand({
            TableName: table,
            Item: sessionItem(next),
            ConditionExpression: 'version = :v',
            ExpressionAttributeValues: { ':v': session.version },
          }),
        );
      } catch (error) {
        if (isConditionalCheckFailed(error))
          throw new StateConflictError(
            `inventory ${session.inventoryId} of ${session.dlqArn}`,
            `version ${session.version}`,
            'changed by another invocation',
            error,
          );
        throw error;
      }
      return next;
    },
    async putHoldPage(dlqArn, inventoryId, seq, handles) {
      await client().send(
        new PutCommand({
          TableName: table,
          Item: {
            pk: keys.dlq(dlqArn),
            sk: keys.holdPage(inventoryId, seq),
            entity: 'hold-page',
            ...shapeOf('hold-page'),
            seq,
            handles,
          },
        }),
      );
    },
    holdPages(dlqArn, inventoryId, fromSeq) {
      return {
        async *[Symbol.asyncIterator]() {
          let start: Record<string, unknown> | undefined;
          do {
            const out = await client().send(
              new QueryCommand({
                TableName: table,
                KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
                ExpressionAttributeValues: {
                  ':pk': keys.dlq(dlqArn),
                  ':from': keys.holdPage(inventoryId, fromSeq),
                  ':to': `${keys.holdPagePrefix(inventoryId)}~`,
                },
                ConsistentRead: true,
                ...(start ? { ExclusiveStartKey: start } : {}),
              }),
            );
            for (const raw of out.Items ?? []) {
              const item = readShape('hold-page', raw, `hold page ${String(raw.sk)} of ${dlqArn}`);
              yield { seq: Number(item.seq), handles: (item.handles as string[] | undefined) ?? [] };
            }
            start = out.LastEvaluatedKey;
          } while (start);
        },
      };
    },
    async deleteHoldPage(dlqArn, inventoryId, seq) {
      await client().send(
        new DeleteCommand({
          TableName: table,
          Key: { pk: keys.dlq(dlqArn), sk: keys.holdPage(inventoryId, seq) },
        }),
      );
    },
  };
}

/** Most messages a session holds at once on a standard queue (SQS allows about 120,000 in flight). */
export const DEFAULT_HOLD_LIMIT = 110_000;
/** The same for a FIFO queue (this pipeline assumes 20,000 in flight). */
export const DEFAULT_FIFO_HOLD_LIMIT = 18_000;
/**
 * The hold covers the next invocation's start on top of the plan: a Step Functions Retry waits
 * seconds, a Lambda cold start a few more. Milliseconds.
 */
export const HANDOVER_MARGIN_MS = 120_000;
/** The plan is the time the rest needs at the measured rate, times this. */
export const PLAN_SAFETY_FACTOR = 1.5;
/** SQS's longest visibility timeout, milliseconds; a held message cannot stay hidden longer. */
export const MAX_HOLD_MS = 12 * 3600 * 1000;

/** Ports of {@link inventoryStep}. */
export interface InventoryStepDeps {
  queues: Pick<SqsQueues, 'receive' | 'changeVisibility' | 'describe'>;
  envelopes: EnvelopeStore;
  sessions: InventorySessionStore;
  /** Lambda's `context.getRemainingTimeInMillis`. */
  remainingTimeMs: () => number;
  /** Epoch milliseconds. */
  now: () => number;
}

/** Input of {@link inventoryStep}. */
export interface InventoryStepInput {
  dlq: QueueInfo;
  registration: QueueRegistration;
  incidentId: string;
  /** Owner of the DLQ's inventory lease (the alarm transition's dedupe key). */
  leaseOwner: string;
  /** Budgets of this invocation. */
  budgets?: Partial<InventoryBudgets>;
  /** Most messages held at once. @default {@link DEFAULT_HOLD_LIMIT} (FIFO {@link DEFAULT_FIFO_HOLD_LIMIT}) */
  holdLimit?: number;
}

/** What one step did. */
export interface InventoryStepResult {
  /** The session after the step. */
  session: InventorySession;
  /** `running`: call again (another invocation); `complete`: inventoried and released. */
  status: 'running' | 'complete';
  /** This step's inventory run (undefined when the step only released or found it complete). */
  run?: InventoryResult;
}

/** The hold limit of a DLQ: the asked one, within the in-flight limit of its queue type. */
export function holdLimitOf(dlq: Pick<QueueInfo, 'fifo'>, asked?: number): number {
  const cap = dlq.fifo ? DEFAULT_FIFO_HOLD_LIMIT : DEFAULT_HOLD_LIMIT;
  const limit = dlq.fifo ? SQS_FIFO_IN_FLIGHT_LIMIT : SQS_IN_FLIGHT_LIMIT;
  return Math.max(10, Math.min(asked ?? cap, cap, limit));
}

/**
 * How long the session needs its messages held from `now`, milliseconds: the messages not yet
 * inventoried at the rate measured so far, times {@link PLAN_SAFETY_FACTOR}, plus this invocation
 * and the next one's start. Before anything is measured: this invocation and the handover.
 */
export function holdPlanMs(
  session: Pick<InventorySession, 'depthAtStart' | 'inventoried' | 'activeMs'>,
  remainingMs: number,
): number {
  const base = remainingMs + HANDOVER_MARGIN_MS;
  if (session.inventoried === 0 || session.activeMs <= 0) return base;
  const ratePerMs = session.inventoried / session.activeMs;
  const left = Math.max(0, session.depthAtStart - session.inventoried);
  return Math.ceil((left / ratePerMs) * PLAN_SAFETY_FACTOR) + base;
}

/**
 * A session as it starts: RUNNING, nothing inventoried yet, version 0 (the record `inventoryStep`
 * creates on its first step; also what a test of an abandoned session starts from).
 *
 * @param start.dlq the DLQ (its depth at start is visible + in flight, messages)
 * @param start.now the start time, epoch milliseconds; `holdUntil` likewise
 * @param start.holdLimit messages the session may hold at once (holdLimitOf)
 */
export function newInventorySession(start: {
  dlq: Pick<QueueInfo, 'arn' | 'url' | 'visible' | 'inFlight'>;
  incidentId: string;
  leaseOwner: string;
  now: number;
  holdUntil: number;
  holdLimit: number;
}): InventorySession {
  const { dlq, incidentId, now } = start;
  return {
    dlqArn: dlq.arn,
    dlqUrl: dlq.url,
    inventoryId: incidentId,
    incidentId,
    leaseOwner: start.leaseOwner,
    status: 'RUNNING',
    startedAt: now,
    holdUntil: start.holdUntil,
    depthAtStart: dlq.visible + dlq.inFlight,
    holdLimit: start.holdLimit,
    inventoried: 0,
    created: 0,
    held: 0,
    holdPages: 0,
    releasedPages: 0,
    invocations: 0,
    activeMs: 0,
    extensions: 0,
    stopReason: null,
    sampled: false,
    releaseFailures: 0,
    summary: emptySummary(),
    warnings: [],
    version: 0,
    updatedAt: new Date(now).toISOString(),
  };
}

/**
 * One bounded step of a DLQ's inventory session: creates the session on the first call, extends
 * the held messages when the plan would run out, inventories within this invocation's budgets,
 * and once the DLQ is inventoried (or holds as many as may be held) releases every held message.
 * Safe to call again after a crash (a complete session returns at once).
 *
 * @throws whatever the ports throw (messages this step could not account for are released first);
 *   StateConflictError when another invocation changed the session meanwhile.
 */
export async function inventoryStep(
  input: InventoryStepInput,
  deps: InventoryStepDeps,
): Promise<InventoryStepResult> {
  const { dlq, incidentId } = input;
  let session = await deps.sessions.get(dlq.arn, incidentId);
  if (!session) {
    const now = deps.now();
    const fresh = newInventorySession({
      dlq,
      incidentId,
      leaseOwner: input.leaseOwner,
      now,
      holdUntil:
        now +
        Math.min(
          MAX_HOLD_MS,
          holdPlanMs({ depthAtStart: 0, inventoried: 0, activeMs: 0 }, deps.remainingTimeMs()),
        ),
      holdLimit: holdLimitOf(dlq, input.holdLimit),
    });
    if (await deps.sessions.create(fresh)) session = fresh;
    else session = (await deps.sessions.get(dlq.arn, incidentId)) as InventorySession;
  }
  if (session.status === 'COMPLETE') return { session, status: 'complete' };

  let run: InventoryResult | undefined;
  if (session.status === 'RUNNING') {
    // A step that died without saving (Lambda timeout, crash) may have left pages past the last
    // saved one: their messages are not counted, so release them; this step receives them again.
    await releaseFrom(session, session.holdPages, deps);
    session = await extendIfNeeded(session, deps);
    const startedAt = deps.now();
    const step = session.invocations + 1;
    let seq = session.holdPages;
    const holdLimit = session.holdLimit;
    const current = session;
    const added = emptySummary();
    try {
      run = await inventoryDlq(
        {
          dlq,
          registration: input.registration,
          incidentId,
          inventory: { id: current.inventoryId, step },
          collectEnvelopes: false,
          onAdded: (envelope, at) => addToSummary(added, envelope, at),
          ...(input.budgets ? { budgets: input.budgets } : {}),
          hold: {
            untilMs: current.holdUntil,
            alreadyHeld: current.held,
            limit: holdLimit,
            record: async (handles) => {
              if (handles.length === 0) return;
              await deps.sessions.putHoldPage(dlq.arn, current.inventoryId, seq, handles);
              seq += 1;
            },
          },
        },
        {
          queues: deps.queues,
          envelopes: deps.envelopes,
          remainingTimeMs: deps.remainingTimeMs,
          now: deps.now,
        },
      );
    } catch (error) {
      // Not saved: what this step handed over is not counted. Release it, so the retry (same
      // step number, so its envelopes are not taken for duplicates) receives it again.
      await releaseFrom(current, current.holdPages, deps).catch(() => undefined);
      throw error;
    }
    const next: InventorySession = {
      ...session,
      summary: mergeSummaries(session.summary, added),
      inventoried: session.inventoried + run.added,
      created: session.created + run.created,
      held: session.held + run.handedOver,
      holdPages: seq,
      invocations: step,
      activeMs: session.activeMs + (deps.now() - startedAt),
      stopReason: run.stopReason,
      releaseFailures: session.releaseFailures + run.releaseFailures,
      warnings: [...new Set([...session.warnings, ...run.warnings])].slice(0, 20),
    };
    // Envelopes left unwritten were released: the next step receives them again.
    // Also not final while other receivers hold messages of the DLQ ('in-flight'): the next step
    // waits for them (their visibility timeouts end), so they are inventoried too.
    const unfinished = ['message-budget', 'time', 'in-flight'].includes(run.stopReason);
    const final = !unfinished && run.unprocessed === 0;
    if (final) {
      next.status = 'RELEASING';
      if (run.stopReason === 'page-budget') {
        next.sampled = true;
        next.warnings = [
          ...next.warnings,
          `the DLQ holds more than the ${holdLimit} messages one inventory may hold invisible (SQS allows about ${dlq.fifo ? SQS_FIFO_IN_FLIGHT_LIMIT : SQS_IN_FLIGHT_LIMIT} in flight): the inventory is a sample of the first ${next.inventoried} messages SQS returned`,
        ];
      }
    }
    session = await deps.sessions.save(next);
  }
  if (session.status === 'RELEASING') session = await releaseHeld(session, input, deps);
  return { session, status: session.status === 'COMPLETE' ? 'complete' : 'running', ...(run ? { run } : {}) };
}

/** Extends every held message to a longer plan when the current one would run out. */
async function extendIfNeeded(session: InventorySession, deps: InventoryStepDeps): Promise<InventorySession> {
  const now = deps.now();
  const need = Math.min(session.startedAt + MAX_HOLD_MS, now + holdPlanMs(session, deps.remainingTimeMs()));
  // Extending costs one call per 10 held messages: only when the plan would otherwise run out
  // during this invocation or the handover to the next.
  if (session.holdUntil >= now + deps.remainingTimeMs() + HANDOVER_MARGIN_MS || need <= session.holdUntil)
    return session;
  const seconds = Math.max(30, Math.ceil((need - now) / 1000));
  let failures = 0;
  for await (const page of deps.sessions.holdPages(
    session.dlqArn,
    session.inventoryId,
    session.releasedPages,
  ))
    failures += await deps.queues.changeVisibility(session.dlqUrl, page.handles, seconds);
  return deps.sessions.save({
    ...session,
    holdUntil: now + seconds * 1000,
    extensions: session.extensions + 1,
    ...(failures > 0
      ? {
          warnings: [
            ...session.warnings,
            `${failures} held messages could not be extended and may reappear early`,
          ],
        }
      : {}),
  });
}

/** Releases (visibility 0) and deletes the hold pages from `fromSeq` on; returns the failures. */
async function releaseFrom(
  session: InventorySession,
  fromSeq: number,
  deps: InventoryStepDeps,
): Promise<number> {
  let failed = 0;
  for await (const page of deps.sessions.holdPages(session.dlqArn, session.inventoryId, fromSeq)) {
    failed += await deps.queues.changeVisibility(session.dlqUrl, page.handles, 0);
    await deps.sessions.deleteHoldPage(session.dlqArn, session.inventoryId, page.seq);
  }
  return failed;
}

/**
 * Releases the held messages page by page (visibility 0), deleting each page once released, until
 * none is left or the invocation's time runs short (the next step goes on).
 *
 * A page starts only while the invocation has the safety margin plus the slowest page so far left
 * (milliseconds): a page of 500 handles is 50 ChangeMessageVisibilityBatch calls, and where those
 * slow down (measured locally at 100,000 held, docs/cost-model.md) a page begun with
 * only the 15 s margin left was cut by the invocation's deadline and failed the step
 * `Redrive.Transient`; now the step saves what it released and the next one goes on.
 */
async function releaseHeld(
  session: InventorySession,
  input: InventoryStepInput,
  deps: InventoryStepDeps,
): Promise<InventorySession> {
  const margin = input.budgets?.safetyMarginMs ?? 15_000;
  let current = session;
  let slowestPageMs = 0;
  for await (const page of deps.sessions.holdPages(
    session.dlqArn,
    session.inventoryId,
    session.releasedPages,
  )) {
    if (deps.remainingTimeMs() < margin + slowestPageMs) return deps.sessions.save(current);
    const startedAt = deps.now();
    const failed = await deps.queues.changeVisibility(session.dlqUrl, page.handles, 0);
    await deps.sessions.deleteHoldPage(session.dlqArn, session.inventoryId, page.seq);
    slowestPageMs = Math.max(slowestPageMs, deps.now() - startedAt);
    current = {
      ...current,
      releasedPages: page.seq + 1,
      held: Math.max(0, current.held - page.handles.length),
      releaseFailures: current.releaseFailures + failed,
    };
  }
  return deps.sessions.save({ ...current, status: 'COMPLETE', held: 0 });
}

/** What a session covered (`IncidentSummary.coverage`). */
export function coverageOf(session: InventorySession): InventoryCoverage {
  return {
    depthAtStart: session.depthAtStart,
    inventoried: session.inventoried,
    complete: session.status !== 'RUNNING',
    sampled: session.sampled,
    drawn: session.sampled
      ? `the first ${session.inventoried} messages ReceiveMessage returned (SQS's order, not random), held invisible at once up to the limit of ${session.holdLimit}; the rest of the DLQ was not seen`
      : null,
    holdLimit: session.holdLimit,
    invocations: session.invocations,
  };
}

/**
 * The incident summary of a session so far: its partial summary finished, marked partial while
 * the session runs or when it is a sample, with its coverage.
 * @param now - epoch milliseconds.
 */
export function summaryOfSession(session: InventorySession, now: number): SummaryResult {
  const result = finishSummary(session.summary, {
    now,
    partial: session.status === 'RUNNING' || session.sampled,
  });
  result.summary.coverage = coverageOf(session);
  return result;
}
