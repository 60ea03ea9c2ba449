import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OnCallReport } from '#incident/on-call-report.js';
import type { ExportedEnvelope, ExportHeader } from '../../cli/commands/envelopes.js';
import { decodeBody } from '../../cli/commands/envelopes.js';
import type { IncidentRow } from '../../cli/commands/incidents.js';
import { describeRequest } from '../../local/approver.js';
import type { Produced } from '../../local/demo/producer.js';
import { formatReport, type RunReport } from '../../local/demo/report.js';
import { type ServedStack, serveLocalStack } from '../../local/serve.js';
import { dlq } from '../support/cli.js';
import { runNamedScenario } from '../support/scenarios.js';

// `npm run local` (serveLocalStack) then `npm start` against it (the healthy scenario, on the same
// code path), then the dlq CLI with the real SDK clients against that stack.
describe('dlq against the local stack after npm start', { timeout: 240_000 }, () => {
  let served: ServedStack;
  let report: RunReport;
  let produced: Produced | undefined;
  let incidentId: string;
  beforeAll(async () => {
    served = await serveLocalStack();
    report = await runNamedScenario('healthy', {
      messages: 60,
      onTaskResult: (_state, _result, ctx) => {
        produced = ctx.incident.produced;
      },
    });
    incidentId = report.incidentId as string;
  });
  afterAll(async () => {
    await served?.stop();
  });

  it('dlq incidents --json lists the incident with the report’s message count and its earliest retention deadline', async () => {
    const run = await dlq('incidents', '--json');
    expect(run.code).toBe(0);
    const row = run.json<IncidentRow[]>().find((r) => r.incidentId === incidentId);
    expect(row).toMatchObject({ messages: report.inventoried, outcome: 'completed' });
    // The demo DLQ keeps messages 14 days: the first deadline is about 14 days away.
    expect(row?.firstRetentionDeadlineLeftMs).toBeGreaterThan(13 * 86_400_000);
    expect(Date.parse(row?.firstRetentionDeadline ?? '')).toBeGreaterThan(Date.now());
  });

  it('dlq show --json agrees with the report: counts, causes, deadline, what the redrive did and who approved', async () => {
    const run = await dlq('show', incidentId, '--json');
    expect(run.code).toBe(0);
    const shown = run.json<OnCallReport>();
    expect(shown.messages).toBe(report.inventoried);
    expect(shown.topCauses.reduce((n, c) => n + c.count, 0) + shown.moreCauses * 0).toBeLessThanOrEqual(
      report.inventoried,
    );
    const poison = shown.topCauses.filter(
      (c) => c.classification === 'poison' || c.classification === 'permanent',
    );
    expect(poison.reduce((n, c) => n + c.count, 0)).toBe(report.parked);
    expect(shown.redrive).toMatchObject({
      outcome: 'completed',
      redriven: report.redriven,
      parked: report.parked,
      inDlq: report.remaining,
    });
    expect(shown.oldestMessage?.atMs).toBeLessThan(Date.now());
    expect(shown.firstRetentionDeadline?.leftMs).toBeGreaterThan(0);
    const ended = shown.audit.find((e) => e.kind === 'run-ended');
    expect(ended).toMatchObject({
      executionName: report.executionName,
      outcome: 'completed',
      approval: { decision: 'approved', by: 'local-auto-approval' },
    });
    expect(ended?.plan?.rampRates).toEqual([5, 50, 200]);
    // Nobody clicked: the audit says the run was approved by policy, and which policy.
    const approved = shown.audit.filter((e) => e.kind === 'approved');
    expect(approved).toEqual([
      expect.objectContaining({
        by: 'local-auto-approval',
        via: 'local',
        executionName: report.executionName,
      }),
    ]);
    expect(approved[0]?.text).toMatch(
      /^approved by policy: npm start auto-approves every request when stdin is not a terminal/,
    );

    const text = await dlq('show', incidentId);
    expect(text.stdout).toContain(`${report.inventoried} messages`);
    expect(text.stdout).toMatch(/first expiry: +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(in 13 d 23 h\)/);
    expect(text.stdout).toContain('run-ended: completed via workflow');
    expect(text.stdout).toContain('approved by policy: npm start auto-approves');
  });

  it('dlq envelopes --export writes every envelope with its body byte-identical to what was produced, after a header saying it holds payloads', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dlq-export-'));
    const file = join(dir, 'f.jsonl');
    const run = await dlq('envelopes', incidentId, '--export', file);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('holds message payloads');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const [first, ...lines] = (await readFile(file, 'utf8')).trimEnd().split('\n');
    const header = JSON.parse(first as string) as ExportHeader;
    expect(header).toMatchObject({ type: 'export-header', containsPayloads: true, incidentId });
    const envelopes = lines.map((l) => JSON.parse(l) as ExportedEnvelope);
    expect(envelopes).toHaveLength(report.inventoried);
    expect(envelopes.filter((e) => e.state === 'PARKED')).toHaveLength(report.parked);
    for (const e of envelopes) {
      const body = decodeBody(e);
      const orderId = (JSON.parse(body.toString('utf8')) as { orderId: string }).orderId;
      expect(body.equals(Buffer.from(produced?.bodies[orderId] ?? '', 'utf8'))).toBe(true);
      expect(e.bodyBytes).toBe(body.byteLength);
    }
    // Never overwritten.
    const again = await dlq('envelopes', incidentId, '--export', file);
    expect([again.code, again.stderr.trim()]).toEqual([
      2,
      `dlq: --export: ${file} already exists (an export is never overwritten)`,
    ]);
  });

  it('dlq register writes a registration through the construct’s schema, dlq registrations lists it beside the demo’s, and a bad field is refused naming it', async () => {
    const arn = 'arn:aws:sqs:us-east-1:123456789012:payments-dlq';
    const written = await dlq(
      'register',
      arn,
      '--owner',
      'payments',
      '--approver',
      'U0PAYMENTS1',
      '--approver',
      'U0PAYMENTS2',
      '--json',
    );
    expect(written.code).toBe(0);
    expect(written.json()).toMatchObject({
      dlqArn: arn,
      approvers: ['U0PAYMENTS1', 'U0PAYMENTS2'],
      sampleSize: 5,
      rampRates: [5, 50, 200],
    });
    const listed = (await dlq('registrations', '--json')).json<Array<{ registration: { dlqArn: string } }>>();
    expect(listed.map((r) => r.registration.dlqArn)).toEqual(
      expect.arrayContaining([arn, 'arn:aws:sqs:us-east-1:123456789012:orders-dlq']),
    );
    const dir = await mkdtemp(join(tmpdir(), 'dlq-reg-'));
    const file = join(dir, 'reg.json');
    await writeFile(file, JSON.stringify({ dlqArn: arn, sampleSize: 500, ownr: 'x' }));
    const bad = await dlq('register', '--file', file);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^dlq: invalid registration: .*sampleSize.*; .*ownr/);
    const after = (await dlq('registrations', '--json')).json<
      Array<{ registration: { dlqArn: string; sampleSize: number } }>
    >();
    expect(after.find((r) => r.registration.dlqArn === arn)?.registration.sampleSize).toBe(5);
  });

  it('npm start’s report and the terminal approval prompt carry the same on-call answers as dlq show, with UTC clock times', async () => {
    const shown = (await dlq('show', incidentId, '--json')).json<OnCallReport>();
    expect(report.onCall).toMatchObject({
      messages: shown.messages,
      topCauses: shown.topCauses,
      firstRetentionDeadline: { atMs: shown.firstRetentionDeadline?.atMs },
      redrive: { outcome: 'completed', redriven: report.redriven },
    });
    const table = formatReport(report);
    expect(table).toContain('what failed:    2 causes');
    // How long ago depends on how long the run in beforeAll took (over a minute on a loaded machine).
    expect(table).toMatch(
      /\| started +\| \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \((?:now|\d+ (?:s|min|h \d+ min) ago)\)/,
    );
    const prompt = await describeRequest({
      taskToken: 't',
      executionName: 'run-x',
      payload: {
        plan: { incidentId, dlqArn: shown.dlqArn, rampRates: [5, 50], sampleSize: 5, dwellSeconds: 2 },
        preflight: { dlqDepth: 36, warnings: ['preflight says so'] },
      },
      timeoutSeconds: 3600,
    });
    for (const c of shown.topCauses)
      expect(prompt).toContain(
        `${c.count} x ${c.errorClass} (${c.classification}): e.g. ${c.exampleMessageId}`,
      );
    expect(prompt).toMatch(/since when: +oldest message sent \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(/);
    expect(prompt).toContain('! preflight says so');
    expect(prompt).toMatch(/expires: +\S+Z \(in 1 h 0 min\)/);
  });

  it('dlq envelopes --cause keeps only that cause and refuses an unknown one naming --cause', async () => {
    const shown = (await dlq('show', incidentId, '--json')).json<OnCallReport>();
    const poison = shown.topCauses.find(
      (c) => c.classification === 'poison' || c.classification === 'permanent',
    );
    const run = await dlq('envelopes', incidentId, '--cause', poison?.fingerprint as string, '--json');
    expect(run.json<unknown[]>()).toHaveLength(poison?.count as number);
    const bad = await dlq('envelopes', incidentId, '--cause', 'NoSuchError');
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/^dlq: --cause: "NoSuchError" is not a cause of incident/);
  });
  it('a second npm start on the same stack is an incident of its own, with the first run’s counts', async () => {
    const second = await runNamedScenario('healthy', { messages: 60 });
    expect(second.incidentId).not.toBe(incidentId);
    for (const field of ['inventoried', 'redriven', 'parked', 'missing'] as const)
      expect(second[field]).toBe(report[field]);
    expect(second.consumer).toMatchObject({ processed: report.consumer.processed, duplicatesSkipped: 0 });
    expect(second.countsAddUp).toBe(true);
  });
});
