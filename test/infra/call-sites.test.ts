/**
 * Every AWS call each function's code makes, judged by action AND resource against the roles as
 * the demo app synthesizes them (cached synth without bundling, local/iam/template-policies.ts),
 * by the same judge the local stack uses (local/iam/judge.ts). A call site names the resource
 * class it targets (the DLQ, its source queue, the parking queue, the table, ...); the test also
 * proves the list complete: every SDK command a function's bundle reaches is one of its call
 * sites, or is reviewed as linked but never called.
 */
import { join } from 'node:path';
import {
  FUNCTION_ACCESS,
  FUNCTION_NAMES,
  type FunctionName,
  MOVE_TASK_CANCEL_ACTIONS,
  MOVE_TASK_DESTINATION_ACTIONS,
  MOVE_TASK_DLQ_ACTIONS,
} from '@dlq-redrive/cdk/function-catalog';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../infra/pipeline-stack.js';
import { sdkActionsOf } from '../../infra/sdk-actions.js';
import { type IamRequest, judge } from '../../local/iam/judge.js';
import {
  demoTemplates,
  logicalIdResolver,
  type RoleStatement,
  roleLogicalId,
  rolePolicies,
  type Templates,
} from '../../local/iam/template-policies.js';
import { scaled } from '../support/timeouts.js';

const ACCOUNT = '111122223333';
const REGION = 'us-east-1';

/** What a call targets. */
type On =
  | 'dlq'
  | 'source'
  | 'parking'
  | 'table'
  | 'index'
  | 'secret'
  | 'machine'
  | 'alias'
  | 'execution'
  | 'alarm'
  | 'self'
  | 'park-role';
type Site = readonly [action: string, on: On];

const sqs = (on: On, ...actions: string[]): Site[] => actions.map((a) => [`sqs:${a}`, on] as const);
const DLQ_READ = ['GetQueueUrl', 'GetQueueAttributes', 'ReceiveMessage', 'ChangeMessageVisibility'];
const SECRET: Site[] = [['secretsmanager:GetSecretValue', 'secret']];

/** The SQS, Step Functions, Lambda, CloudWatch, IAM and Secrets Manager call sites of each function. */
const CALL_SITES: Record<FunctionName, readonly Site[]> = {
  triage: [
    ...sqs('dlq', ...DLQ_READ, 'ListDeadLetterSourceQueues'),
    ...sqs('source', 'GetQueueAttributes'),
    ['states:StartExecution', 'alias'],
    ['states:DescribeExecution', 'execution'],
    ['cloudwatch:DescribeAlarms', 'alarm'],
    ...SECRET,
  ],
  'validate-input': [
    ...sqs('dlq', 'GetQueueUrl'),
    ...sqs('source', 'GetQueueUrl'),
    ...sqs('parking', 'GetQueueUrl'),
  ],
  preflight: [
    ...sqs('dlq', ...DLQ_READ, 'ListDeadLetterSourceQueues', 'ListMessageMoveTasks'),
    ...sqs('source', 'GetQueueUrl', 'GetQueueAttributes'),
    ...sqs('parking', 'GetQueueAttributes'),
    ['iam:SimulatePrincipalPolicy', 'park-role'],
  ],
  'request-approval': SECRET,
  park: [...sqs('dlq', ...DLQ_READ, 'DeleteMessage'), ...sqs('parking', 'GetQueueAttributes', 'SendMessage')],
  'sample-redrive': [
    ...sqs('dlq', ...DLQ_READ, 'DeleteMessage'),
    ...sqs('source', 'GetQueueUrl', 'GetQueueAttributes', 'SendMessage'),
  ],
  'verify-sample': sqs('dlq', ...DLQ_READ),
  'continue-inventory': [
    ...sqs('dlq', 'GetQueueAttributes', 'ReceiveMessage', 'ChangeMessageVisibility'),
    ...SECRET,
  ],
  'move-task': [
    ...sqs('dlq', ...DLQ_READ, 'StartMessageMoveTask', 'ListMessageMoveTasks', 'CancelMessageMoveTask'),
    ...sqs('source', 'GetQueueUrl', 'GetQueueAttributes'),
    ...SECRET,
  ],
  reconcile: sqs('dlq', ...DLQ_READ, 'ListMessageMoveTasks'),
  notify: [...sqs('dlq', ...MOVE_TASK_CANCEL_ACTIONS.map((a) => a.slice(4))), ...SECRET],
  'slack-interaction': [['states:SendTaskSuccess', 'machine'], ['lambda:InvokeFunction', 'self'], ...SECRET],
  'execution-ended': [...sqs('dlq', ...MOVE_TASK_CANCEL_ACTIONS.map((a) => a.slice(4))), ...SECRET],
  mover: [
    ...sqs('dlq', ...DLQ_READ, 'DeleteMessage'),
    ...sqs('source', 'GetQueueUrl', 'GetQueueAttributes', 'SendMessage'),
    // Un-park: the parking queue is the source of the move.
    ...sqs('parking', 'GetQueueAttributes', 'ReceiveMessage', 'ChangeMessageVisibility', 'DeleteMessage'),
  ],
};

/**
 * Actions the bundle links (a shared adapter object carries every method) but the function's core
 * never calls: its deps are typed `Pick<Port, ...>` without them. Reviewed by hand against each
 * core's deps; granting them would break least privilege (only move-task may start move tasks).
 */
const LINKED_NOT_CALLED: Partial<Record<FunctionName, readonly string[]>> = {
  'validate-input': [
    'sqs:ReceiveMessage',
    'sqs:ChangeMessageVisibility',
    'sqs:GetQueueAttributes',
    'sqs:ListDeadLetterSourceQueues',
  ],
  preflight: ['sqs:StartMessageMoveTask', 'sqs:CancelMessageMoveTask'],
  reconcile: ['sqs:StartMessageMoveTask', 'sqs:CancelMessageMoveTask', 'sqs:ListDeadLetterSourceQueues'],
  park: ['sqs:ListDeadLetterSourceQueues'],
  'sample-redrive': ['sqs:ListDeadLetterSourceQueues'],
  'verify-sample': ['sqs:ListDeadLetterSourceQueues'],
  'move-task': ['sqs:ListDeadLetterSourceQueues'],
  mover: ['sqs:ListDeadLetterSourceQueues'],
  // Describes the DLQ it was handed (by URL) and receives from it; never resolves names or sources.
  'continue-inventory': ['sqs:GetQueueUrl', 'sqs:ListDeadLetterSourceQueues'],
  // Only cancel an orphaned move task of their run; never start one.
  notify: ['sqs:StartMessageMoveTask'],
  'execution-ended': ['sqs:StartMessageMoveTask'],
};

/** Grants docs/contracts.md requires before the code calls them (Notify's Slack notifier). */
const REQUIRED_BY_CONTRACT: Partial<Record<FunctionName, readonly string[]>> = {
  notify: ['secretsmanager:GetSecretValue'],
};

/** Services whose every action is judged here; KMS, S3 and origin targets are per registered key/bucket/origin (monitored-dlq.test.ts). */
const JUDGED = /^(sqs|states|lambda|secretsmanager|cloudwatch|iam):/;

let templates: Templates;
let policies: Record<FunctionName, RoleStatement[]>;
let resolve: ReturnType<typeof logicalIdResolver>;

/** The logical id of the only resource of a type whose id starts with `prefix`. */
function only(type: string, prefix: string): { stack: string; logicalId: string } {
  const found = Object.entries(templates).flatMap(([stack, t]) =>
    Object.entries<{ Type: string }>(t.Resources)
      .filter(([id, r]) => r.Type === type && id.startsWith(prefix))
      .map(([logicalId]) => ({ stack, logicalId })),
  );
  if (found.length !== 1) throw new Error(`${found.length} ${type} resources named ${prefix}*`);
  return found[0] as { stack: string; logicalId: string };
}

/** The request of a call site of `name`, with the demo app's resources named by logical id. */
function requestOf(name: FunctionName, [action, on]: Site): IamRequest {
  const arnOf = (type: string, prefix: string, attribute: string | null = 'Arn') =>
    resolve({ ...only(type, prefix), type, attribute });
  const machine = () => arnOf('AWS::StepFunctions::StateMachine', 'RedriveWorkflow', null);
  const resource: Record<On, () => string> = {
    dlq: () => arnOf('AWS::SQS::Queue', 'OrdersDlq'),
    source: sourceArn,
    parking: () => arnOf('AWS::SQS::Queue', 'ParkingQueue'),
    table: () => arnOf('AWS::DynamoDB::Table', 'Table'),
    index: () => `${arnOf('AWS::DynamoDB::Table', 'Table')}/index/byIdempotencyKey`,
    secret: () => arnOf('AWS::SecretsManager::Secret', 'SlackSecret', null),
    machine,
    alias: machine,
    execution: () =>
      `arn:aws:states:${REGION}:${ACCOUNT}:execution:${only('AWS::StepFunctions::StateMachine', 'RedriveWorkflow').logicalId}:run-1`,
    alarm: () => `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:orders-dlq-visible`,
    self: () => resolve({ ...roleFunction(name), type: 'AWS::Lambda::Function', attribute: 'Arn' }),
    'park-role': () =>
      resolve({ ...roleLogicalId(templates, 'park'), type: 'AWS::IAM::Role', attribute: 'Arn' }),
  };
  const context =
    on === 'alias' ? new Map([['states:StateMachineQualifier', ['live']]]) : new Map<string, string[]>();
  return { function: name, action, resource: resource[on](), context };
}

function sourceArn(): string {
  const sources = Object.entries(templates).flatMap(([stack, t]) =>
    Object.entries<{ Type: string }>(t.Resources)
      .filter(([id, r]) => r.Type === 'AWS::SQS::Queue' && /^Orders[0-9A-F]{8}$/.test(id))
      .map(([logicalId]) => ({ stack, logicalId })),
  );
  expect(sources).toHaveLength(1);
  return resolve({
    ...(sources[0] as { stack: string; logicalId: string }),
    type: 'AWS::SQS::Queue',
    attribute: 'Arn',
  });
}

/** The function resource of a pipeline function (its role's logical id without `Role<hash>`). */
function roleFunction(name: FunctionName): { stack: string; logicalId: string } {
  const stem = roleLogicalId(templates, name).logicalId.replace(/Role[0-9A-F]{8}$/, '');
  const found = Object.entries(templates).flatMap(([stack, t]) =>
    Object.entries<{ Type: string }>(t.Resources)
      .filter(([id, r]) => r.Type === 'AWS::Lambda::Function' && new RegExp(`^${stem}[0-9A-F]{8}$`).test(id))
      .map(([logicalId]) => ({ stack, logicalId })),
  );
  expect(found).toHaveLength(1);
  return found[0] as { stack: string; logicalId: string };
}

beforeAll(async () => {
  templates = await demoTemplates();
  resolve = logicalIdResolver(ACCOUNT, REGION);
  policies = rolePolicies(templates, { accountId: ACCOUNT, region: REGION, resolve });
}, scaled(120_000));

describe('call sites judged against the synthesized roles', () => {
  it.each(FUNCTION_NAMES)('%s: every call site is allowed on its resource (action and ARN)', async (name) => {
    // The table's: every DynamoDB action the bundle reaches, on the table, and queries on its index.
    const dynamo = (await sdkActionsOf(join(REPO_ROOT, 'functions'), name))
      .filter((a) => a.startsWith('dynamodb:'))
      .flatMap((a): Site[] =>
        a === 'dynamodb:Query'
          ? [
              [a, 'table'],
              [a, 'index'],
            ]
          : [[a, 'table']],
      );
    const denied = [...CALL_SITES[name], ...dynamo]
      .map((site) => judge(policies[name], requestOf(name, site)))
      .filter((v) => !v.allowed);
    expect(dynamo.length).toBeGreaterThan(0);
    expect(denied).toEqual([]);
  });

  it('refuses, naming action and resource, a call whose statement is taken out (Park reading the parking queue)', () => {
    const site: Site = ['sqs:GetQueueAttributes', 'parking'];
    const request = requestOf('park', site);
    const without = policies.park.flatMap((s): RoleStatement[] => {
      const actions = [s.Action ?? []].flat().filter((a) => a !== 'sqs:GetQueueAttributes');
      return [s.Resource].flat().includes(request.resource) ? [{ ...s, Action: actions }] : [s];
    });

    expect(judge(policies.park, request)).toMatchObject({ allowed: true });
    expect(judge(without, request)).toEqual({
      allowed: false,
      code: 'no-statement',
      function: 'park',
      action: 'sqs:GetQueueAttributes',
      resource: request.resource,
      grant: { catalogEntry: 'park', action: 'sqs:GetQueueAttributes', resource: request.resource },
    });
  });

  it('refuses starting an execution other than through the alias (states:StateMachineQualifier)', () => {
    const request = requestOf('triage', ['states:StartExecution', 'alias']);
    const unqualified = { ...request, context: new Map<string, string[]>() };

    expect(judge(policies.triage, request).allowed).toBe(true);
    expect(judge(policies.triage, unqualified)).toMatchObject({ allowed: false, code: 'condition-failed' });
  });

  it(
    'lists every SDK call the bundles reach, and grants no SQS/Step Functions/Lambda/Secrets action no call site needs',
    async () => {
      const calledOnlyByTheService = new Set<string>([
        ...MOVE_TASK_DLQ_ACTIONS,
        ...MOVE_TASK_DESTINATION_ACTIONS,
      ]);
      for (const name of FUNCTION_NAMES) {
        const reachable = await sdkActionsOf(join(REPO_ROOT, 'functions'), name);
        const notCalled = new Set(LINKED_NOT_CALLED[name] ?? []);
        const sites = new Set(CALL_SITES[name].map(([action]) => action));
        const access = FUNCTION_ACCESS[name];
        const perRegistered = new Set([
          ...(access.keys ?? []),
          ...(access.payloadBuckets ?? []),
          ...Object.values(access.originTargets ?? {}).flat(),
          ...(access.accessRoles ?? []),
        ]);
        const unlisted = reachable.filter(
          (a) => JUDGED.test(a) && !notCalled.has(a) && !sites.has(a) && !perRegistered.has(a),
        );
        expect(unlisted, `${name}: reached but not a call site`).toEqual([]);
        expect(
          [...notCalled].filter((a) => !reachable.includes(a)),
          `${name}: stale exception`,
        ).toEqual([]);
        const granted = new Set(policies[name].flatMap((s) => [s.Action ?? []].flat()));
        const excess = [...granted].filter(
          (a) =>
            /^(sqs|states|lambda|secretsmanager):/.test(a) &&
            !sites.has(a) &&
            !(name === 'move-task' && calledOnlyByTheService.has(a)) &&
            a !== 'secretsmanager:DescribeSecret' &&
            !(REQUIRED_BY_CONTRACT[name] ?? []).includes(a) &&
            // Lambda itself sends triage's failed async events to its DLQ, with triage's role.
            !(name === 'triage' && a === 'sqs:SendMessage'),
        );
        expect(excess, `${name}: granted, never called`).toEqual([]);
      }
    },
    scaled(120_000),
  );
});
