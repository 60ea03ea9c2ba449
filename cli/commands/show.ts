/**
 * `dlq show INCIDENT`: the on-call report of one incident (what failed, how many, since when, the
 * first retention deadline, what the redrive did, the warnings in full) and its audit trail (who
 * asked, approved, rejected or cancelled, with which plan, and how each run ended).
 */
import type { Command } from 'commander';
import { auditLine, buildOnCallReport, onCallReportLines } from '#incident/on-call-report.js';
import { clockText } from '#platform/clock-text.js';
import { type CliContext, requireIncident } from '../context.js';
import { formatFields, printJson } from '../output.js';

/** Registers the command. */
export function showCommand(program: Command, ctx: CliContext): void {
  program
    .command('show')
    .description('show one incident: causes, counts, deadlines, runs, approvals (the audit trail)')
    .argument('<incident>', 'incident id (dlq incidents lists them)')
    .option('--json', 'print the report as JSON')
    .action(async (incidentId: string, opts: { json?: boolean }) => {
      const incident = await requireIncident(ctx, incidentId);
      const audit = await ctx.audit.list(incidentId);
      const now = ctx.now();
      const report = buildOnCallReport(incident, audit, now);
      if (opts.json) return printJson(ctx.io, { ...report, executionArn: incident.executionArn ?? null });
      const head = formatFields([
        ['incident', `${report.incidentId} (${report.status})`],
        ['DLQ', report.dlqArn],
        ['opened', report.openedAt ? clockText(report.openedAt.atMs, now) : '-'],
        ['execution', incident.executionArn ?? '-'],
      ]);
      const trail =
        audit.length === 0
          ? ['audit trail:    none yet']
          : ['audit trail:', ...audit.map((e) => `  ${auditLine(e, now)}`)];
      ctx.io.stdout.write(`${[head, ...onCallReportLines(report, now), ...trail].join('\n')}\n`);
      if (report.topCauses.length > 0)
        ctx.io.stdout.write(
          `\ncauses by fingerprint (for --cause):\n${report.topCauses.map((c) => `  ${c.fingerprint}`).join('\n')}\n`,
        );
    });
}
