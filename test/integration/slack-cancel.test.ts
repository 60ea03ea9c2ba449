/**
 * Slack while the ramp runs, end to end on the local stack: the real MoveTask handler posts the
 * progress message into the incident's thread (Slack capture server), an approver's signed Cancel
 * click goes to the real slack-interaction handler, which records the cancel request and the audit
 * entry in DynamoDB Local; the next gate (the real MoveTask handler again) reads it and ends the
 * ramp `cancelled`, and the progress message says so. Lambda's async Invoke (the interaction's
 * follow-up) goes to a recording fake, as in slack-approval.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApprovalStore } from '#approval/approval-store.js';
import { CANCEL_ACTION_ID } from '#approval/ramp-progress-message.js';
import { createAuditTrail } from '#incident/audit-trail.js';
import { createCancelRequests } from '#incident/cancel-requests.js';
import { createQueueRegistry } from '#incident/queue-registry.js';
import type { RampResult } from '../../functions/move-task/move-task.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { lambdaContext as context, planFor } from '../support/redrive-fixtures.js';
import type { SlackCapture } from '../support/slack-capture.js';
import {
  type Handler,
  type SlackRig,
  signedInteraction,
  startSlackRig,
} from '../support/slack-interaction.js';

const SECRET = 'test-signing-secret-not-real-0002';
const DLQ = 'arn:aws:sqs:us-east-1:123456789012:cancel-orders-dlq';
const APPROVERS = ['U0APPROVER1', 'U0APPROVER2'];
type Block = { type: string; elements?: Array<{ action_id?: string; value?: string }> };

let stack: LocalStack;
let rig: SlackRig;
let capture: SlackCapture;
let interactionHandler: Handler;
let moveTaskHandler: Handler;

beforeAll(async () => {
  stack = await startLocalStack();
  rig = await startSlackRig(SECRET);
  capture = rig.capture;
  interactionHandler = (await import('../../functions/slack-interaction/handler.js')).handler as Handler;
  moveTaskHandler = (await import('../../functions/move-task/handler.js')).handler as Handler;
  await createQueueRegistry().putRegistration({
    dlqArn: DLQ,
    slackChannel: 'C0OPS00001',
    approvers: APPROVERS,
  });
});

afterAll(async () => {
  await rig?.close();
  await stack?.stop();
});

/** A run whose ramp is at its first step (no task yet: the gate needs no move task to cancel). */
function runOf(name: string) {
  const plan = planFor({
    dlqArn: DLQ,
    dlqUrl: 'http://127.0.0.1:1/cancel-orders-dlq',
    incidentId: `inc-${name}`,
  });
  const ramp = {
    decision: 'hold' as const,
    rateIndex: 0,
    rate: 5,
    taskHandle: null,
    status: null,
    moved: 0,
    toMove: 0,
    failureReason: null,
    reason: 'move task started at 5 msg/s',
    dwellSeconds: 5,
    movedBefore: 12,
    baseline: 40,
  };
  return { plan, executionName: `exec-${name}`, ramp };
}

/** Posts the run's progress message the way the ramp does (the real MoveTask handler reports it). */
async function progressPosted(name: string) {
  const run = runOf(name);
  await createApprovalStore().putThread(
    run.plan.incidentId,
    { channel: 'C0OPS00001', ts: `1767350100.00${name.length}` },
    2e9,
  );
  const before = capture.callsTo('chat.postMessage').length;
  // `check` with a cancel request absent and no task: the gate holds; its report posts the message.
  const { reportRampProgress } = await import('../../functions/move-task/slack-progress.js');
  await reportRampProgress(run.plan, run.executionName, { ...run.ramp, reinflow: 0, excess: 0 });
  const posted = capture.callsTo('chat.postMessage').slice(before);
  expect(posted).toHaveLength(1);
  const blocks = posted[0]?.args.blocks as Block[];
  const button = blocks.find((b) => b.type === 'actions')?.elements?.[0];
  return { run, button, posted: posted[0] };
}

/** A signed Function URL event of a click on the Cancel button. */
function cancelClick(
  value: string,
  user: { id: string; username: string },
  responseId: string,
  secret = SECRET,
) {
  const payload = {
    type: 'block_actions',
    user: { id: user.id, username: user.username, team_id: 'T0EXAMPLE' },
    response_url: capture.responseUrl(responseId),
    actions: [{ type: 'button', action_id: CANCEL_ACTION_ID, block_id: 'redrive_progress', value }],
  };
  return signedInteraction(secret, payload);
}

/** Sends a click to the real handler, then runs what it async-invoked (as Lambda would). */
const clickAndRunFollowUps = (event: unknown) => rig.clickAndRunFollowUps(interactionHandler, event);

describe('Slack Cancel button with the real slack-interaction and MoveTask handlers (DynamoDB Local)', () => {
  it('the ramp posts its progress into the approval thread with a Cancel button naming the run', async () => {
    const { run, button, posted } = await progressPosted('post');
    expect(posted?.args.thread_ts).toBe('1767350100.004');
    expect(JSON.stringify(posted?.args.blocks)).toContain('step 1/2: *5 msg/s* · moved 12 · re-inflow 0');
    expect(button).toMatchObject({
      action_id: CANCEL_ACTION_ID,
      value: `${run.plan.incidentId} ${run.executionName}`,
    });
  });

  it("an approver's signed click records the cancel request and audit entry; a second approver is told who asked first; the next gate ends the ramp cancelled and the message loses its button", async () => {
    const { run, button } = await progressPosted('cancel');
    const ack = await clickAndRunFollowUps(
      cancelClick(String(button?.value), { id: 'U0APPROVER1', username: 'dave' }, 'cancel-1'),
    );
    expect(ack).toEqual({ statusCode: 200, headers: {}, body: '' });
    const request = await createCancelRequests().get(run.plan.incidentId, run.executionName);
    expect(request).toMatchObject({ by: 'dave', via: 'slack', reason: 'cancelled in Slack by dave' });
    const audit = await createAuditTrail().list(run.plan.incidentId);
    expect(audit.map((e) => [e.kind, e.by, e.via, e.executionName])).toEqual([
      ['cancel-requested', 'dave', 'slack', run.executionName],
    ]);
    const reply = capture.responses.filter((r) => r.id === 'cancel-1').at(-1)?.body;
    expect(reply?.replace_original).toBe(true);
    expect(JSON.stringify(reply?.blocks)).toContain('Cancel requested by dave (slack)');
    expect(JSON.stringify(reply?.blocks)).not.toContain(CANCEL_ACTION_ID);

    await clickAndRunFollowUps(
      cancelClick(String(button?.value), { id: 'U0APPROVER2', username: 'erin' }, 'cancel-2'),
    );
    const second = capture.responses.filter((r) => r.id === 'cancel-2').at(-1)?.body;
    expect(second).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(String(second?.text)).toMatch(/^Cancel already requested by dave \(slack\) at /);
    expect((await createCancelRequests().get(run.plan.incidentId, run.executionName))?.by).toBe('dave');

    const updatesBefore = capture.callsTo('chat.update').length;
    const gate = (await moveTaskHandler(
      {
        action: 'check',
        plan: run.plan,
        preflight: { sourceArns: [] },
        ramp: run.ramp,
        executionName: run.executionName,
      },
      context,
    )) as RampResult;
    expect(gate.decision).toBe('cancelled');
    expect(gate.reason).toMatch(
      /^cancelled by dave \(slack\) at .*: cancelled in Slack by dave; 12 message\(s\) moved before the cancel/,
    );
    const update = capture.callsTo('chat.update').slice(updatesBefore).at(-1);
    expect(JSON.stringify(update?.args.blocks)).toContain('ramp ended: *cancelled*');
    expect(JSON.stringify(update?.args.blocks)).not.toContain(CANCEL_ACTION_ID);
  });

  it("a pre-approved run (no approval thread yet) posts its progress in the registration's channel, which becomes the incident's thread", async () => {
    const run = runOf('preapproved');
    const before = capture.callsTo('chat.postMessage').length;
    const { reportRampProgress } = await import('../../functions/move-task/slack-progress.js');
    await reportRampProgress(run.plan, run.executionName, { ...run.ramp, reinflow: 0, excess: 0 });
    const posted = capture.callsTo('chat.postMessage').slice(before);
    expect(posted.map((p) => [p.args.channel, p.args.thread_ts])).toEqual([['C0OPS00001', undefined]]);
    const thread = await createApprovalStore().getThread(run.plan.incidentId);
    expect(thread?.channel).toBe('C0OPS00001');
    expect(thread?.ts).toMatch(/^\d+\.\d+$/);
  });

  it('a click by someone not on the approver list, or with a bad signature, records nothing', async () => {
    const { run, button } = await progressPosted('stranger');
    await clickAndRunFollowUps(
      cancelClick(String(button?.value), { id: 'U0STRANGER', username: 'mallory' }, 'stranger'),
    );
    const reply = capture.responses.filter((r) => r.id === 'stranger').at(-1)?.body;
    expect(reply).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(String(reply?.text)).toMatch(/^You are not an approver/);
    const forged = await interactionHandler(
      cancelClick(String(button?.value), { id: 'U0APPROVER1', username: 'dave' }, 'forged', 'not-the-secret'),
      context,
    );
    expect(forged).toMatchObject({ statusCode: 401, body: '' });
    expect(await createCancelRequests().get(run.plan.incidentId, run.executionName)).toBeNull();
    expect(await createAuditTrail().list(run.plan.incidentId)).toEqual([]);
  });
});
