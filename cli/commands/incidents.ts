/**
 * `dlq incidents`: open and recent incidents, newest first, with their message counts, the
 * earliest retention deadline and how the last run ended.
 */
import type { Command } from 'commander';
import { buildOnCallReport, type OnCallReport } from '#incident/on-call-report.js';
import { clockText } from '#platform/clock-text.js';
import { intArg } from '../args.js';
import type { CliContext } from '../context.js';
import { formatTable, printJson } from '../output.js';

/** One row of `dlq incidents --json`. */
export interface IncidentRow {
  incidentId: string;
  dlqArn: string;
  status: string;
  messages: number;
  openedAt: string | null;
  oldestMessageSentAt: string | null;
  firstRetentionDeadline: string | null;
  /** Time left before the first message expires, milliseconds (negative: passed). */
  firstRetentionDeadlineLeftMs: number | null;
  outcome: string | null;
  topCause: string | null;
}

function rowOf(r: OnCallReport): IncidentRow {
  const top = r.topCauses[0];
  return {
    incidentId: r.incidentId,
    dlqArn: r.dlqArn,
    status: r.status,
    messages: r.messages,
    openedAt: r.openedAt?.at ?? null,
    oldestMessageSentAt: r.oldestMessage?.at ?? null,
    firstRetentionDeadline: r.firstRetentionDeadline?.at ?? null,
    firstRetentionDeadlineLeftMs: r.firstRetentionDeadline?.leftMs ?? null,
    outcome: r.redrive?.outcome ?? null,
    topCause: top ? `${top.count} x ${top.errorClass}` : null,
  };
}

/** Registers the command. */
export function incidentsCommand(program: Command, ctx: CliContext): void {
  program
    .command('incidents')
    .description('list open and recent incidents, newest first')
    .option('--limit <n>', 'most incidents listed (1..1000)', intArg(1, 1000), 20)
    .option('--open', 'only incidents whose workflow has not ended (no outcome recorded yet)')
    .option('--json', 'print JSON (an array of incidents)')
    .action(async (opts: { limit: number; open?: boolean; json?: boolean }) => {
      const now = ctx.now();
      const reports = (await ctx.incidents.listIncidents({ limit: opts.limit }))
        .map((i) => buildOnCallReport(i, [], now))
        .filter((r) => !opts.open || r.redrive?.outcome == null);
      const rows = reports.map(rowOf);
      if (opts.json) return printJson(ctx.io, rows);
      if (rows.length === 0) {
        ctx.io.stdout.write('no incidents\n');
        return;
      }
      ctx.io.stdout.write(
        `${formatTable(
          ['INCIDENT', 'DLQ', 'STATUS', 'MESSAGES', 'OPENED', 'FIRST EXPIRY', 'OUTCOME', 'TOP CAUSE'],
          reports.map((r, i) => [
            r.incidentId,
            r.queue,
            r.status,
            String(r.messages),
            r.openedAt ? clockText(r.openedAt.atMs, now) : '-',
            r.firstRetentionDeadline ? clockText(r.firstRetentionDeadline.atMs, now) : '-',
            r.redrive?.outcome ?? 'running/none',
            rows[i]?.topCause ?? '-',
          ]),
        )}\n`,
      );
    });
}
