/**
 * Envelope state changes in bulk (docs/contracts.md "Stores"): what `EnvelopeStore.setState` writes
 * without an expected state (`state`, `stateReason` set or removed, `stateChangedAt`), as one
 * PartiQL UPDATE per envelope, 25 to a BatchExecuteStatement call, for the steps that settle many
 * envelopes at once (Reconcile, Park). Apart from the envelope store so that the functions that
 * never change states in bulk (Preflight, the mover) do not bundle it.
 *
 * Each UPDATE is idempotent (the same state and reason written twice is the same item), and
 * PartiQL's UPDATE only changes an item that exists (else `ConditionalCheckFailed`), so it never
 * creates a half envelope. A crash between two calls leaves some envelopes moved and the others
 * not: the step's retry (or a restart) writes the same changes again.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchExecuteStatement.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ql-reference.update.html
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { createDynamoBatches, type Statement } from '#platform/dynamo-batches.js';
import { RecordNotFoundError, TransientError } from '#platform/errors.js';
import { envelopeKey } from './envelope-items.js';
import type { EnvelopeState } from './model.js';

/** One envelope's new state, and its reason (absent: the stored reason is removed). */
export interface StateChange {
  messageId: string;
  state: EnvelopeState;
  reason?: string | undefined;
}

/** Bulk state changes of one table's envelopes. */
export interface EnvelopeStates {
  /**
   * Moves envelopes of one DLQ to their states (see the module comment); unwritten statements are
   * sent again with backoff for up to 30 s.
   * @throws RecordNotFoundError naming an envelope that does not exist (the others are written).
   * @throws TransientError when some are still not written after the retries.
   */
  setStates(dlqArn: string, changes: readonly StateChange[]): Promise<void>;
}

/** Unwritten state changes are retried this long, milliseconds. */
const STATE_WRITE_DEADLINE_MS = 30_000;

/** The PartiQL UPDATE of one state change, stamped `at` (ISO 8601). */
export function stateStatement(table: string, dlqArn: string, change: StateChange, at: string): Statement {
  const key = envelopeKey(dlqArn, change.messageId);
  const withReason = change.reason !== undefined;
  return {
    Statement: `UPDATE "${table}" SET "state" = ? SET "stateChangedAt" = ? ${withReason ? 'SET "stateReason" = ?' : 'REMOVE "stateReason"'} WHERE pk = ? AND sk = ?`,
    Parameters: [change.state, at, ...(withReason ? [change.reason] : []), key.pk, key.sk],
  };
}

/**
 * Creates the bulk state writer.
 * @param options.client - @default the shared document client
 * @param options.tableName - @default pipelineConfig().tableName (`TABLE_NAME`)
 */
export function createEnvelopeStates(
  options: { client?: DynamoDBDocumentClient; tableName?: string } = {},
): EnvelopeStates {
  const client = () => options.client ?? documentClient();
  const table = options.tableName ?? pipelineConfig().tableName;
  const batches = createDynamoBatches({ client, table });
  return {
    async setStates(dlqArn, changes) {
      if (changes.length === 0) return;
      const at = new Date().toISOString();
      const r = await batches.execute(
        changes,
        (change) => stateStatement(table, dlqArn, change, at),
        Date.now() + STATE_WRITE_DEADLINE_MS,
      );
      const gone = r.conditionFailed[0];
      if (gone) throw new RecordNotFoundError(`envelope ${gone.messageId} in ${dlqArn}`);
      if (r.left.length > 0)
        throw new TransientError(
          `dynamodb:BatchExecuteStatement (envelope states): ${r.left.length} of ${changes.length} still not written`,
        );
    },
  };
}
