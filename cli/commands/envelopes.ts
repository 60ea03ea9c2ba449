/**
 * `dlq envelopes INCIDENT`: the incident's envelopes (one per DLQ message), optionally of some
 * causes only, as a table, as JSON, or exported to a JSONL file for the team that owns the
 * consumer.
 *
 * An export holds the message payloads: every line has the body exactly as SQS delivered it
 * (`bodyEncoding: 'utf8'` when its bytes are valid UTF-8, else `'base64'` of the bytes), its
 * SHA-256, and the message attributes. The first line is a header saying so; the file is created
 * with mode 0600 and never overwritten.
 */
import { open } from 'node:fs/promises';
import type { Command } from 'commander';
import type { Incident } from '#incident/incident-store.js';
import type { StoredEnvelope } from '#inventory/envelope-store.js';
import { sha256Hex } from '#inventory/idempotency-key.js';
import { clockText, isoUtc } from '#platform/clock-text.js';
import { collect } from '../args.js';
import { type CliContext, requireIncident } from '../context.js';
import { CliError, formatTable, printJson } from '../output.js';
import { startProgress } from '../progress.js';

/** The first line of an export. */
export interface ExportHeader {
  type: 'export-header';
  /** Always true: say it where the file is read. */
  containsPayloads: true;
  warning: string;
  incidentId: string;
  dlqArn: string;
  causes: string[] | null;
  exportedAt: string;
}

/** One envelope line of an export. */
export interface ExportedEnvelope {
  type: 'envelope';
  messageId: string;
  idempotencyKey: string;
  state: string;
  stateReason: string | null;
  sourceArn: string;
  classification: string;
  errorClass: string | null;
  errorMessage: string | null;
  fingerprint: string;
  receiveCount: number;
  sentAt: string;
  retentionDeadline: string;
  messageAttributes: StoredEnvelope['messageAttributes'];
  systemAttributes: Record<string, string>;
  bodyEncoding: 'utf8' | 'base64';
  body: string;
  bodyBytes: number;
  bodySha256: string;
}

/** The warning every export carries, in its header and on stderr. */
export const PAYLOAD_WARNING =
  'this file holds message payloads (bodies and attributes) copied from the DLQ: handle it like the queue data itself (it may contain personal or secret data), share it only with the queue owners, and delete it when done';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body as text when its bytes are valid UTF-8 (byte-exact round trip), else base64. */
export function encodeBody(bytes: Uint8Array): { bodyEncoding: 'utf8' | 'base64'; body: string } {
  try {
    const text = utf8.decode(bytes);
    if (Buffer.from(text, 'utf8').equals(Buffer.from(bytes))) return { bodyEncoding: 'utf8', body: text };
  } catch {
    // not UTF-8: base64 below
  }
  return { bodyEncoding: 'base64', body: Buffer.from(bytes).toString('base64') };
}

/** The bytes of an exported body. */
export function decodeBody(line: Pick<ExportedEnvelope, 'bodyEncoding' | 'body'>): Buffer {
  return line.bodyEncoding === 'utf8' ? Buffer.from(line.body, 'utf8') : Buffer.from(line.body, 'base64');
}

/** True when the envelope belongs to the incident and matches one of the causes (fingerprint or error class). */
export function selects(envelope: StoredEnvelope, incident: Incident, causes: readonly string[] | undefined) {
  if (envelope.incidentId !== undefined && envelope.incidentId !== incident.incidentId) return false;
  if (!causes || causes.length === 0) return true;
  return causes.some(
    (c) => c === envelope.failure.fingerprint || c === (envelope.failure.errorClass ?? '<none>'),
  );
}

/**
 * The causes named by `--cause` that the incident knows (fingerprint or error class).
 * @throws CliError (exit 2) naming `--cause` and the known causes when one is unknown.
 */
export function checkCauses(incident: Incident, causes: readonly string[] | undefined): void {
  for (const c of causes ?? []) {
    const known = incident.summary.causes.some((g) => g.fingerprint === c || g.errorClass === c);
    if (!known)
      throw new CliError(
        `--cause: "${c}" is not a cause of incident ${incident.incidentId} (known: ${incident.summary.causes.map((g) => g.errorClass).join(', ') || 'none'}; dlq show lists their fingerprints)`,
        2,
      );
  }
}

function exportLine(e: StoredEnvelope, body: Uint8Array): ExportedEnvelope {
  return {
    type: 'envelope',
    messageId: e.messageId,
    idempotencyKey: e.idempotencyKey,
    state: e.state,
    stateReason: e.stateReason ?? null,
    sourceArn: e.sourceArn,
    classification: e.classification,
    errorClass: e.failure.errorClass ?? null,
    errorMessage: e.failure.errorMessage ?? null,
    fingerprint: e.failure.fingerprint,
    receiveCount: e.receiveCount,
    sentAt: isoUtc(e.sentAt),
    retentionDeadline: isoUtc(e.retentionDeadline),
    messageAttributes: e.messageAttributes,
    systemAttributes: e.systemAttributes,
    ...encodeBody(body),
    bodyBytes: body.byteLength,
    bodySha256: sha256Hex(body),
  };
}

/** Registers the command. */
export function envelopesCommand(program: Command, ctx: CliContext): void {
  program
    .command('envelopes')
    .description('list (or export) the envelopes of an incident: one per DLQ message')
    .argument('<incident>', 'incident id')
    .option('--cause <cause>', 'only this cause: a fingerprint or an error class (repeatable)', collect)
    .option('--export <file>', 'write every selected envelope with its exact body to a new JSONL file')
    .option('--json', 'print JSON (without bodies; --export writes them)')
    .action(async (incidentId: string, opts: { cause?: string[]; export?: string; json?: boolean }) => {
      if (opts.export !== undefined && !opts.export.endsWith('.jsonl'))
        throw new CliError(`--export: the file name must end in .jsonl, got "${opts.export}"`, 2);
      const incident = await requireIncident(ctx, incidentId);
      checkCauses(incident, opts.cause);
      if (opts.export !== undefined)
        return exportEnvelopes(ctx, incident, opts.cause, opts.export, opts.json);
      const now = ctx.now();
      const rows: StoredEnvelope[] = [];
      for await (const e of ctx.envelopes.listEnvelopes(incident.dlqArn))
        if (selects(e, incident, opts.cause)) rows.push(e);
      if (opts.json)
        return printJson(
          ctx.io,
          rows.map((e) => {
            const { inlineBody: _b, ...rest } = e;
            return rest;
          }),
        );
      ctx.io.stdout.write(
        `${formatTable(
          ['MESSAGE ID', 'STATE', 'CLASS', 'ERROR CLASS', 'RECEIVES', 'SENT', 'EXPIRES', 'REASON'],
          rows.map((e) => [
            e.messageId,
            e.state,
            e.classification,
            e.failure.errorClass ?? '<none>',
            String(e.receiveCount),
            clockText(e.sentAt, now),
            clockText(e.retentionDeadline, now),
            e.stateReason ?? e.failure.errorMessage ?? '',
          ]),
        )}\n${rows.length} envelope(s)\n`,
      );
    });
}

async function exportEnvelopes(
  ctx: CliContext,
  incident: Incident,
  causes: string[] | undefined,
  file: string,
  json: boolean | undefined,
): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, 'wx', 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(
      code === 'EEXIST'
        ? `--export: ${file} already exists (an export is never overwritten)`
        : `--export: cannot create ${file}: ${(error as Error).message}`,
      2,
    );
  }
  const header: ExportHeader = {
    type: 'export-header',
    containsPayloads: true,
    warning: PAYLOAD_WARNING,
    incidentId: incident.incidentId,
    dlqArn: incident.dlqArn,
    causes: causes ?? null,
    exportedAt: isoUtc(ctx.now()),
  };
  const progress = startProgress(
    ctx.io,
    incident.summary.messageCount,
    'export |{bar}| {value}/{total} envelopes',
  );
  let count = 0;
  let bytes = 0;
  try {
    await handle.write(`${JSON.stringify(header)}\n`);
    for await (const e of ctx.envelopes.listEnvelopes(incident.dlqArn)) {
      if (!selects(e, incident, causes)) continue;
      const body = await ctx.envelopes.readBody(e);
      await handle.write(`${JSON.stringify(exportLine(e, body))}\n`);
      count += 1;
      bytes += body.byteLength;
      if (count > incident.summary.messageCount) progress.setTotal(count);
      progress.update(count);
    }
  } finally {
    progress.stop();
    await handle.close();
  }
  const summary = {
    file,
    envelopes: count,
    bodyBytes: bytes,
    containsPayloads: true,
    warning: PAYLOAD_WARNING,
  };
  if (json) printJson(ctx.io, summary);
  else ctx.io.stdout.write(`wrote ${count} envelope(s) (${bytes} body bytes) to ${file}\n`);
  ctx.io.stderr.write(`warning: ${PAYLOAD_WARNING}\n`);
}
