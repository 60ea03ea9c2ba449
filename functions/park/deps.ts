/** Park's ports: the transfer ports it shares with SampleRedrive (`#transfer/transfer-deps.js`), its batched SQS calls and ledger, the bulk envelope states and the projected envelope listing. */
import { createEnvelopeListing } from '#inventory/envelope-listing.js';
import { createEnvelopeStates } from '#inventory/envelope-states.js';
import { tableAccess } from '#platform/clients.js';
import { type DepsOptions, pipelineConfig } from '#platform/config.js';
import { createTransferDeps } from '#transfer/transfer-deps.js';
import { createLedgerBatch } from './ledger-batch.js';
import type { ParkDeps } from './park.js';
import { createParkSendBatch } from './park-transfer.js';

/** Builds the ports of `park`; `options.overrides` replaces any of them. */
export function createParkDeps(options: DepsOptions<ParkDeps> = {}): ParkDeps {
  const config = options.config ?? pipelineConfig();
  const transfer = createTransferDeps(config);
  return {
    ...transfer,
    // SendMessageBatch and DeleteMessageBatch: Park moves its messages 10 at a time.
    sqs: { sendBatch: createParkSendBatch(), deleteBatch: transfer.sqs.deleteBatch },
    ledgerBatch: createLedgerBatch({ ledger: transfer.ledger, ...tableAccess(config) }),
    envelopeStates: createEnvelopeStates(tableAccess(config)),
    listing: createEnvelopeListing(tableAccess(config)),
    ...options.overrides,
  };
}
