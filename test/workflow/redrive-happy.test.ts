import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { createIncidentStore } from '#incident/incident-store.js';
import { runTriage } from '../../local/demo/triage-local.js';
import { DEFINITION_URL, LocalWorkflowRunner } from '../../local/runner.js';
import { useWorkflowStack } from '../support/workflow-stack.js';
import { envelopeStates, runIncident } from './harness.js';

type AslValidator = (definition: unknown) => { isValid: boolean; errors: unknown[] };
const aslValidator = createRequire(import.meta.url)('asl-validator') as AslValidator;

describe('redrive workflow on the local stack (real ASL, real handlers)', () => {
  const local = useWorkflowStack();

  it('the deployed ASL passes asl-validator and every Task binds to an existing handler', () => {
    const definition = JSON.parse(readFileSync(DEFINITION_URL, 'utf8'));
    const { isValid, errors } = aslValidator(structuredClone(definition));
    expect(errors).toEqual([]);
    expect(isValid).toBe(true);
    const bindings = new LocalWorkflowRunner().taskBindings();
    expect(bindings.RequestApproval).toBe('request-approval');
    expect(bindings.CheckDlqStillHasMessages).toBe('preflight');
    for (const folder of new Set(Object.values(bindings)))
      expect(() =>
        readFileSync(new URL(`../../functions/${folder}/handler.ts`, import.meta.url)),
      ).not.toThrow();
  });

  it('happy path: every inventoried message is redriven or parked, the counts add up and nothing is lost', async () => {
    const run = await runIncident(local.sqs, { name: 'happy', messages: 60, poisonEvery: 10 });
    const { result, reconcile, incident } = run;
    expect(result.error).toBeNull();
    expect(result.status).toBe('SUCCEEDED');
    expect(result.path).toContain('StartMoveTask');
    expect(result.path.at(-1)).toBe('Done');
    expect(incident.dlqDepth).toBe(60);
    expect(reconcile).toBeDefined();
    if (!reconcile) return;
    expect(reconcile.inventoried).toBe(60);
    expect(reconcile.parked).toBe(6);
    expect(reconcile.redriven).toBe(54);
    expect(reconcile.discarded).toBe(0);
    expect(reconcile.inDlq).toBe(0);
    expect(reconcile.missing).toBe(0);
    expect(reconcile.redriven + reconcile.parked + reconcile.discarded + reconcile.inDlq).toBe(
      reconcile.inventoried,
    );
    expect(run.dlqDepthAfter).toBe(0);
    expect(await envelopeStates(incident.queues.dlqArn)).toEqual({
      IN_DLQ: 0,
      REDRIVEN: 54,
      PARKED: 6,
      DISCARDED: 0,
    });
    // The consumer, healthy again, processed each redriven order exactly once.
    expect(incident.consumer.stats.processedTwice).toBe(0);
    expect(incident.consumer.stats.processed).toBe(54);
  });

  it('C19 the same incident started twice (EventBridge retry of the same alarm transition) runs one execution', async () => {
    const name = 'twice';
    const incidentRun = await runIncident(local.sqs, { name, messages: 30, poisonEvery: 10 });
    const first = incidentRun.starter.executions[0];
    expect(first).toBeDefined();
    // A second delivery of the same transition, and a direct second start of the same incident.
    const again = await runTriage(incidentRun.alarmEvent, incidentRun.starter);
    const direct = await incidentRun.starter.startWorkflow({
      incidentId: incidentRun.incidentId,
      input: {
        dlqArn: incidentRun.incident.queues.dlqArn,
        incidentId: incidentRun.incidentId,
        requestedBy: 'triage',
      },
    });
    expect(again.outcome).toBe('duplicate');
    expect(direct).toEqual({ executionArn: first?.executionArn, alreadyStarted: true });
    expect(incidentRun.starter.executions).toHaveLength(1);
    const incident = await createIncidentStore().getIncident(incidentRun.incidentId);
    expect(incident?.executionArn).toBe(first?.executionArn);
    expect(incidentRun.reconcile?.missing).toBe(0);
  });
});
