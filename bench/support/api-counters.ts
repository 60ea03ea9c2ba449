/**
 * Counts the AWS calls an SDK client sends, by command, for every benchmark (bench/support/measure.ts
 * builds its per-run meter on it), and with `capacity` sums the DynamoDB capacity they consume
 * (the middleware then asks every DynamoDB call that can report it for `ReturnConsumedCapacity`
 * INDEXES, which DynamoDB Local answers as the service would). The pipeline's code is unchanged:
 * only the client is instrumented.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html
 */

/** Calls by command name, and consumed DynamoDB capacity units. */
export interface ApiCounts {
  calls: Record<string, number>;
  /** Read capacity units (DynamoDB). */
  rcu: number;
  /** Write capacity units (DynamoDB), base table and index writes together. */
  wcu: number;
}

/** DynamoDB calls that take ReturnConsumedCapacity. */
const REPORTS_CAPACITY = new Set([
  'GetItemCommand',
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'QueryCommand',
  'ScanCommand',
  'BatchGetItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
  'TransactGetItemsCommand',
]);
/** Write calls (their capacity is write units). */
const WRITES = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
  'BatchExecuteStatementCommand',
]);
/**
 * BatchExecuteStatement does not report capacity (DynamoDB Local): each of its UPDATEs of an
 * envelope (observation fields, Reconcile's and Park's states) counts as this many write units:
 * 2 on the table (an envelope item of 1-2 KB, billed on its whole size) and 2 on the
 * `byIdempotencyKey` index, which projects ALL attributes, so every changed attribute is written
 * there too (the UpdateItems they replace measured 4.0 each).
 */
const WRITE_UNITS_PER_STATEMENT = 4;
/**
 * A statement on a ledger entry (`LEDGER#<messageId>`: Park's INSERTs and SENT / deleted UPDATEs,
 * functions/park/ledger-batch.ts): a small item outside the index, 1 write unit, as the PutItem and
 * UpdateItems they replace measured.
 */
const WRITE_UNITS_PER_LEDGER_STATEMENT = 1;
const unitsOfStatement = (statement: unknown) =>
  JSON.stringify((statement as { Parameters?: unknown }).Parameters ?? []).includes('"LEDGER#')
    ? WRITE_UNITS_PER_LEDGER_STATEMENT
    : WRITE_UNITS_PER_STATEMENT;

type Stack = { middlewareStack: { add: (m: unknown, o: unknown) => void } };

/**
 * Instruments `client` (an SDK v3 client; once per client) and returns its live counts.
 * @param options.capacity - also ask for and sum consumed capacity (DynamoDB). @default false:
 *   the calls are sent as the pipeline makes them, and `rcu`/`wcu` stay 0.
 */
export function countCalls(client: unknown, options: { capacity?: boolean } = {}): ApiCounts {
  const counts: ApiCounts = { calls: {}, rcu: 0, wcu: 0 };
  (client as Stack).middlewareStack.add(
    (
      next: (args: unknown) => Promise<{ output?: Record<string, unknown> }>,
      context: { commandName?: string },
    ) =>
      async (args: { input?: Record<string, unknown> }) => {
        const name = context.commandName ?? 'unknown';
        counts.calls[name] = (counts.calls[name] ?? 0) + 1;
        if (!options.capacity) return next(args);
        if (REPORTS_CAPACITY.has(name) && args.input) args.input.ReturnConsumedCapacity = 'INDEXES';
        const result = await next(args);
        const consumed = result.output?.ConsumedCapacity as
          | { CapacityUnits?: number }
          | Array<{ CapacityUnits?: number }>
          | undefined;
        const units = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []).reduce(
          (n, c) => n + (c.CapacityUnits ?? 0),
          0,
        );
        if (name === 'BatchExecuteStatementCommand')
          counts.wcu += ((args.input?.Statements as unknown[] | undefined) ?? []).reduce(
            (n: number, statement) => n + unitsOfStatement(statement),
            0,
          );
        else if (WRITES.has(name)) counts.wcu += units;
        else counts.rcu += units;
        return result;
      },
    { step: 'initialize', name: 'bench-api-counters' },
  );
  return counts;
}

/** A copy of the counts now (to subtract later). */
export function snapshot(counts: ApiCounts): ApiCounts {
  return { calls: { ...counts.calls }, rcu: counts.rcu, wcu: counts.wcu };
}

/** What happened between two snapshots. */
export function since(now: ApiCounts, before: ApiCounts): ApiCounts {
  const calls: Record<string, number> = {};
  for (const [k, v] of Object.entries(now.calls)) {
    const d = v - (before.calls[k] ?? 0);
    if (d > 0) calls[k] = d;
  }
  return { calls, rcu: now.rcu - before.rcu, wcu: now.wcu - before.wcu };
}

/** Total calls of a count. */
export function totalCalls(counts: ApiCounts): number {
  return Object.values(counts.calls).reduce((a, b) => a + b, 0);
}
