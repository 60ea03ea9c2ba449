/**
 * vitest setup file of the projects whose files start local stacks (first of them): each test file
 * starts from the state an isolated file would have, although the files of a worker share its
 * modules (`isolate: false` in vitest.config.ts). What a file leaves behind and the next one
 * would otherwise inherit:
 *
 * - `process.env`: the local stack writes its endpoints and table name into it, the Slack rig its
 *   Slack stand-in's URL and tokens, some files their own variables. It is put back to what the
 *   worker started with (vitest's own `VITEST_*` variables are left as vitest set them).
 * - whatever the pipeline builds once per container from the configuration: the SDK clients, the
 *   cached configuration, the scoped clients, the Slack credentials, notifier and ramp progress
 *   reporter all go with `resetClients()` (#platform/clients.js, and the `onResetClients` hooks
 *   of those modules).
 * - the transfer fault hook a file installed (#transfer/message-transfer.js).
 *
 * test/support/shared-dynamo.ts, which runs next, then gives the file its own table name.
 */
import { resetClients } from '#platform/clients.js';
import { setTransferFaultHook } from '#transfer/message-transfer.js';

const BASELINE = Symbol.for('dlq-redrive.test.baseline-env');
const holder = globalThis as { [BASELINE]?: Readonly<Record<string, string | undefined>> };

/** vitest sets these per file and per worker; they are not the previous file's state. */
const ownedByVitest = (name: string) => name.startsWith('VITEST');

const baseline = holder[BASELINE];
if (baseline === undefined) {
  holder[BASELINE] = { ...process.env };
} else {
  for (const name of Object.keys(process.env)) {
    if (!ownedByVitest(name) && !(name in baseline)) delete process.env[name];
  }
  for (const [name, value] of Object.entries(baseline)) {
    if (!ownedByVitest(name) && value !== undefined) process.env[name] = value;
  }
}
resetClients();
setTransferFaultHook(undefined);
