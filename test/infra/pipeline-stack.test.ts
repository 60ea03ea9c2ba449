/**
 * The deployable pipeline, synthesized ONCE (beforeAll) from the demo app with the real handlers
 * bundled by the local esbuild (no Docker): resources and their key properties, least-privilege
 * IAM, every ASL placeholder provided, and cdk-nag's AwsSolutions pack with no open finding.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FUNCTION_ACCESS,
  FUNCTION_NAMES,
  type FunctionName,
  MOVE_TASK_DLQ_ACTIONS,
  placeholderOf,
} from '@dlq-redrive/cdk/function-catalog';
import { App, type CfnElement, type Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { TABLE, tableDefinition } from '#platform/table.js';
import {
  aslPlaceholders,
  aslTaskResources,
  DEFAULT_DEFINITION_PATH,
  substitutionsFor,
} from '../../infra/asl.js';
import { bundledPackages, formatLicences, LICENCES_FILE, METAFILE } from '../../infra/bundle-licences.js';
import { esbuildOptionsOf, PIPELINE_BUNDLING } from '../../infra/bundling.js';
import { buildDemoApp, type ExampleQueuesStack } from '../../infra/demo-app.js';
import { type PipelineStack, REPO_ROOT } from '../../infra/pipeline-stack.js';
import { scaled } from '../support/timeouts.js';

const FUNCTIONS_DIR = join(REPO_ROOT, 'functions');

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation templates are untyped JSON.
type Resource = { Type: string; Properties: Record<string, any> };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };

/** Resolves the pseudo parameters of the sample events' account and Region in a template value. */
function resolvePseudo(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(resolvePseudo);
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  const ref = record.Ref;
  if (ref === 'AWS::Partition') return 'aws';
  if (ref === 'AWS::Region') return 'us-east-1';
  if (ref === 'AWS::AccountId') return '111122223333';
  const join = record['Fn::Join'] as [string, unknown[]] | undefined;
  if (join !== undefined) return join[1].map(resolvePseudo).join(join[0]);
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, resolvePseudo(v)]));
}

/**
 * EventBridge matching for patterns made of exact-value arrays (all this rule uses): every
 * pattern field must hold one of the event's values (an array field matches on any element).
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html
 */
function matches(pattern: Record<string, string[]>, event: Record<string, unknown>): boolean {
  return Object.entries(pattern).every(([field, allowed]) =>
    [event[field]].flat().some((value) => allowed.includes(value as string)),
  );
}

function loadEvent(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(REPO_ROOT, path), 'utf8')) as Record<string, unknown>;
}

let app: App;
let pipeline: PipelineStack;
let example: ExampleQueuesStack;
let template: Template;
let exampleTemplate: Template;
let nagReport: ReturnType<AwsSolutionsChecks['validateScope']>;

/** Every IAM statement attached to a role (identified by its logical id in the pipeline stack). */
function statementsOf(roleLogicalId: string): Statement[] {
  const out: Statement[] = [];
  for (const t of [template, exampleTemplate]) {
    for (const policy of Object.values(t.findResources('AWS::IAM::Policy')) as Resource[]) {
      if (!JSON.stringify(policy.Properties.Roles).includes(roleLogicalId)) continue;
      out.push(...(policy.Properties.PolicyDocument.Statement as Statement[]));
    }
  }
  return out;
}

/** The logical id of the state machine's role. */
function machineRoleId(): string {
  return Object.entries(template.findResources('AWS::IAM::Role')).find(([id]) =>
    id.startsWith('RedriveWorkflowRole'),
  )?.[0] as string;
}

function actionsOf(statements: readonly Statement[]): Set<string> {
  return new Set(statements.flatMap((s) => [s.Action].flat()));
}

function roleIdOf(name: FunctionName): string {
  const role = pipeline.roles[name];
  if (role === undefined) throw new Error(`no role for ${name}`);
  return pipeline.getLogicalId(role.node.defaultChild as import('aws-cdk-lib').CfnElement);
}

function functionResource(name: FunctionName): Resource {
  const fn = pipeline.functions[name];
  if (fn === undefined) throw new Error(`no function ${name}`);
  const id = pipeline.getLogicalId(fn.node.defaultChild as import('aws-cdk-lib').CfnElement);
  return template.toJSON().Resources[id] as Resource;
}

beforeAll(() => {
  // The example stack is deployed only when asked (`-c example=true`); its grants are tested here.
  app = new App({ context: { example: 'true' } });
  const built = buildDemoApp(app, { functionsDir: FUNCTIONS_DIR });
  if (built.example === undefined) throw new Error('example=true built no example stack');
  ({ pipeline, example } = { pipeline: built.pipeline, example: built.example });
  app.synth();
  template = Template.fromStack(pipeline);
  exampleTemplate = Template.fromStack(example);
  nagReport = new AwsSolutionsChecks(app, { verbose: true }).validateScope(app);
}, scaled(120_000));

describe('table', () => {
  it('has the keys, index and attribute types of functions/shared/platform/table.ts (one source of truth)', () => {
    const local = tableDefinition('x');
    const tables = Object.values(template.findResources('AWS::DynamoDB::Table')) as Resource[];
    expect(tables).toHaveLength(1);
    const table = tables[0] as Resource;

    expect(table.Properties.KeySchema).toEqual(local.KeySchema);
    expect(
      [...(table.Properties.AttributeDefinitions as { AttributeName: string }[])].sort((a, b) =>
        a.AttributeName.localeCompare(b.AttributeName),
      ),
    ).toEqual(
      [...(local.AttributeDefinitions ?? [])].sort((a, b) =>
        String(a.AttributeName).localeCompare(String(b.AttributeName)),
      ),
    );
    expect(table.Properties.GlobalSecondaryIndexes).toEqual(local.GlobalSecondaryIndexes);
    expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
  });

  it('has point-in-time recovery, the TTL attribute, encryption at rest, deletion protection and is retained', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: true,
      },
    });
  });
});

describe('functions', () => {
  it('builds one function per functions/<name>/handler.ts, and every such folder is in the catalogue', () => {
    const folders = readdirSync(FUNCTIONS_DIR).filter((d) =>
      existsSync(join(FUNCTIONS_DIR, d, 'handler.ts')),
    );

    expect(folders.filter((d) => !(FUNCTION_NAMES as readonly string[]).includes(d))).toEqual([]);
    expect(Object.keys(pipeline.functions).sort()).toEqual([...folders].sort());
    expect(pipeline.missingFunctions).toEqual([]);
    expect(Object.keys(template.findResources('AWS::Lambda::Function'))).toHaveLength(
      folders.length + (template.toJSON().Resources.AWS679f53fac002430cb0da5b7982bd22872 ? 1 : 0),
    );
  });

  it('runs every function on nodejs22.x, arm64, without X-Ray (docs/observability.md), an ESM bundle and its own log group with retention', () => {
    for (const name of Object.keys(pipeline.functions) as FunctionName[]) {
      const props = functionResource(name).Properties;
      expect(props.Runtime, name).toBe('nodejs22.x');
      expect(props.Architectures, name).toEqual(['arm64']);
      expect(props.TracingConfig?.Mode ?? 'PassThrough', name).not.toBe('Active');
      expect(props.Handler, name).toBe('index.handler');
      expect(props.Environment.Variables.NODE_OPTIONS, name).toBe('--enable-source-maps');
      const logGroupRef = props.LoggingConfig.LogGroup.Ref as string;
      expect(template.toJSON().Resources[logGroupRef].Properties.RetentionInDays, name).toBe(30);
    }
  });

  it('bundles each handler as ESM (index.mjs) with the require banner, without Docker', () => {
    const assetDir = join(app.outdir);
    const bundles = readdirSync(assetDir).filter((d) => d.startsWith('asset.'));
    const mjs = bundles.filter((d) => existsSync(join(assetDir, d, 'index.mjs')));
    expect(mjs.length).toBeGreaterThanOrEqual(Object.keys(pipeline.functions).length);
    const sample = readFileSync(join(assetDir, mjs[0] as string, 'index.mjs'), 'utf8');
    expect(sample.startsWith("import { createRequire as __dlqCreateRequire } from 'node:module';")).toBe(
      true,
    );
  });

  it(
    'every bundle loads as an ES module on Node and exports handler (the require banner works)',
    () => {
      const assetDir = app.outdir;
      const files = readdirSync(assetDir)
        .filter((d) => d.startsWith('asset.') && existsSync(join(assetDir, d, 'index.mjs')))
        .map((d) => join(assetDir, d, 'index.mjs'));
      const script = `for (const f of ${JSON.stringify(files)}) { const m = await import(f); console.log(typeof m.handler); }`;

      const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        env: {
          ...process.env,
          AWS_REGION: 'us-east-1',
        },
        encoding: 'utf8',
      });

      expect(out.trim().split('\n')).toEqual(files.map(() => 'function'));
      expect(files.length).toBe(Object.keys(pipeline.functions).length);
    },
    scaled(30_000),
  );

  it('bench/bundles builds a function byte for byte as the stack bundles it (same esbuild options)', async () => {
    const code = functionResource('park').Properties.Code as { S3Key: string };
    const asset = join(app.outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`, 'index.mjs');
    const outfile = join(mkdtempSync(join(tmpdir(), 'dlq-bundle-')), 'index.mjs');

    await build(esbuildOptionsOf(PIPELINE_BUNDLING, join(FUNCTIONS_DIR, 'park', 'handler.ts'), outfile));

    expect(readFileSync(outfile, 'utf8')).toBe(readFileSync(asset, 'utf8'));
  });

  it('ships every bundle with the licences of the packages it carries (from its metafile), not the metafile', async () => {
    const dirs = (Object.keys(pipeline.functions) as FunctionName[]).map((name) => {
      const code = functionResource(name).Properties.Code as { S3Key: string };
      return join(app.outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
    });
    expect(dirs.filter((d) => !existsSync(join(d, LICENCES_FILE)) || existsSync(join(d, METAFILE)))).toEqual(
      [],
    );

    const code = functionResource('park').Properties.Code as { S3Key: string };
    const asset = join(app.outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`, LICENCES_FILE);
    const outfile = join(mkdtempSync(join(tmpdir(), 'dlq-bundle-')), 'index.mjs');
    const { metafile } = await build(
      esbuildOptionsOf(PIPELINE_BUNDLING, join(FUNCTIONS_DIR, 'park', 'handler.ts'), outfile),
    );
    const packages = bundledPackages(metafile as NonNullable<typeof metafile>, REPO_ROOT);
    expect(readFileSync(asset, 'utf8')).toBe(formatLicences(packages));
    expect(packages.filter((p) => (p.text === null && p.source === null) || p.license === 'UNKNOWN')).toEqual(
      [],
    );
    expect(packages.map((p) => `${p.name} ${p.license}`)).toEqual(
      expect.arrayContaining(['@aws-sdk/client-sqs Apache-2.0', 'zod MIT', '@middy/core MIT']),
    );
  });

  it('passes TABLE_NAME to every function and the Slack secret ARN only to the Slack functions', () => {
    for (const name of Object.keys(pipeline.functions) as FunctionName[]) {
      const env = functionResource(name).Properties.Environment.Variables;
      expect(env.TABLE_NAME, name).toBeDefined();
      expect(env.SLACK_SECRET_ARN !== undefined, name).toBe(FUNCTION_ACCESS[name].slackSecret);
    }
  });
});

describe('state machine', () => {
  it('gives request-approval the approval state TimeoutSeconds from the definition (approval TTL outlives the token)', () => {
    const definition = JSON.parse(readFileSync(DEFAULT_DEFINITION_PATH, 'utf8'));
    const env = functionResource('request-approval').Properties.Environment.Variables;

    expect(env.APPROVAL_TIMEOUT_SECONDS).toBe(String(definition.States.RequestApproval.TimeoutSeconds));
  });

  const definition = readFileSync(DEFAULT_DEFINITION_PATH, 'utf8');

  it('provides a value for every placeholder in statemachines/redrive.asl.json', () => {
    const [machine] = Object.values(template.findResources('AWS::StepFunctions::StateMachine')) as Resource[];
    const provided = Object.keys(machine?.Properties.DefinitionSubstitutions ?? {}).sort();

    expect(aslPlaceholders(definition).length).toBeGreaterThan(0);
    expect(provided).toEqual(aslPlaceholders(definition));
  });

  it('refuses to build a definition with a placeholder that maps to no function', () => {
    const text = JSON.stringify({ States: { X: { Type: 'Task', Resource: `$${'{'}UnknownFunctionArn}` } } });

    expect(() => substitutionsFor(text, { [placeholderOf('park')]: 'arn:park' })).toThrow(
      /placeholder\(s\) with no value: \$\{UnknownFunctionArn\}/,
    );
  });

  it('lets the state machine role invoke exactly the functions the definition names, each function and its versions', () => {
    const machineRole = machineRoleId();
    const invoke = statementsOf(machineRole).filter((s) =>
      [s.Action].flat().includes('lambda:InvokeFunction'),
    );
    const named = aslPlaceholders(definition)
      .filter((p) => p.endsWith('FunctionArn'))
      .map((p) => p.replace(/FunctionArn$/, ''));
    const expected = named.flatMap((name) => {
      const fn =
        pipeline.functions[
          FUNCTION_NAMES.find((n) => placeholderOf(n) === `${name}FunctionArn`) as FunctionName
        ];
      const arn = { 'Fn::GetAtt': [pipeline.getLogicalId(fn?.node.defaultChild as CfnElement), 'Arn'] };
      // The function itself (runs started before definitions named versions) and its versions.
      return [arn, { 'Fn::Join': ['', [arn, ':*']] }];
    });

    expect(invoke).toHaveLength(1);
    expect(named.length).toBeGreaterThan(0);
    const sorted = (values: unknown[]) => values.map((v) => JSON.stringify(v)).sort();
    expect(sorted([invoke[0]?.Resource].flat())).toEqual(sorted(expected));
    expect(
      aslTaskResources(JSON.parse(definition)).every(
        (r) => r.startsWith('${') || r.includes(':lambda:') || r === 'arn:aws:states:::states:startExecution',
      ),
    ).toBe(true);
  });

  it('lets the state machine role start executions of itself only, through the alias (a long run continues in a new execution)', () => {
    const machineRole = machineRoleId();
    const starts = statementsOf(machineRole).filter((s) =>
      [s.Action].flat().includes('states:StartExecution'),
    );
    const smId = pipeline.getLogicalId(pipeline.stateMachine?.node.defaultChild as CfnElement);
    expect(starts.map((s) => [s.Resource, s.Condition])).toEqual([
      [{ Ref: smId }, { 'ForAnyValue:StringEquals': { 'states:StateMachineQualifier': ['live'] } }],
    ]);
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      DefinitionSubstitutions: Match.objectLike({ WorkflowAliasName: 'live' }),
    });
  });

  it('logs ALL events without execution data (task tokens stay out of logs) under /aws/vendedlogs/states/, without X-Ray', () => {
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false },
      TracingConfiguration: { Enabled: false },
    });
    const logGroups = Object.entries(template.findResources('AWS::Logs::LogGroup'))
      .filter(([id]) => id.startsWith('RedriveWorkflowLogs'))
      .map(([, r]) => (r as Resource).Properties.LogGroupName as string);
    expect(logGroups).toHaveLength(1);
    expect(logGroups[0]).toMatch(/^\/aws\/vendedlogs\/states\/[A-Za-z0-9-]+$/);
  });
});

describe('safe upgrades: state machine versions and the alias', () => {
  const logicalId = (construct: { node: { defaultChild?: unknown } } | undefined) =>
    pipeline.getLogicalId((construct?.node.defaultChild ?? construct) as CfnElement);

  it('publishes a version from the current revision, keeps it when a new one replaces it, and routes the alias live to it', () => {
    const smId = logicalId(pipeline.stateMachine);
    const versions = template.findResources('AWS::StepFunctions::StateMachineVersion');
    const [versionId] = Object.keys(versions);

    expect(Object.keys(versions)).toHaveLength(1);
    expect(versions[versionId as string]).toMatchObject({
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        StateMachineArn: { Ref: smId },
        StateMachineRevisionId: { 'Fn::GetAtt': [smId, 'StateMachineRevisionId'] },
      },
    });
    template.resourceCountIs('AWS::StepFunctions::StateMachineAlias', 1);
    template.hasResourceProperties('AWS::StepFunctions::StateMachineAlias', {
      Name: 'live',
      RoutingConfiguration: [{ StateMachineVersionArn: { 'Fn::GetAtt': [versionId, 'Arn'] }, Weight: 100 }],
    });
  });

  it('calls the Lambda versions published by the same deploy, and keeps old versions for the runs still on them', () => {
    const resources = template.toJSON().Resources as Record<string, Resource & { DeletionPolicy?: string }>;
    const [machine] = Object.values(template.findResources('AWS::StepFunctions::StateMachine')) as Resource[];
    const substitutions = Object.entries(
      machine?.Properties.DefinitionSubstitutions as Record<string, { Ref: string }>,
    );

    expect(substitutions.length).toBe(aslPlaceholders(readFileSync(DEFAULT_DEFINITION_PATH, 'utf8')).length);
    for (const [placeholder, value] of substitutions) {
      // The alias's name (the continuation starts through it), not a function.
      if (placeholder === 'WorkflowAliasName') continue;
      const name = FUNCTION_NAMES.find((n) => placeholderOf(n) === placeholder) as FunctionName;
      const version = resources[value.Ref];
      expect(version?.Type, placeholder).toBe('AWS::Lambda::Version');
      expect(version?.Properties.FunctionName, placeholder).toEqual({
        Ref: logicalId(pipeline.functions[name]),
      });
      expect(version?.DeletionPolicy, placeholder).toBe('Retain');
    }
  });

  it('has triage start executions through the alias only: STATE_MACHINE_ARN is the alias, StartExecution needs its qualifier', () => {
    const aliasId = logicalId(pipeline.stateMachineAlias);
    const smId = logicalId(pipeline.stateMachine);
    const env = functionResource('triage').Properties.Environment.Variables;
    const starts = (Object.keys(pipeline.functions) as FunctionName[]).flatMap((name) =>
      statementsOf(roleIdOf(name))
        .filter((s) => [s.Action].flat().includes('states:StartExecution'))
        .map((s) => ({ name, ...s })),
    );

    expect(env.STATE_MACHINE_ARN).toEqual({ 'Fn::GetAtt': [aliasId, 'Arn'] });
    expect(starts).toEqual([
      {
        name: 'triage',
        Action: 'states:StartExecution',
        Effect: 'Allow',
        Resource: { Ref: smId },
        Condition: { 'ForAnyValue:StringEquals': { 'states:StateMachineQualifier': ['live'] } },
      },
    ]);
    expect(template.toJSON().Outputs.StateMachineAliasArn.Value).toEqual({ 'Fn::GetAtt': [aliasId, 'Arn'] });
  });

  it('lets slack-interaction answer task tokens of executions of any version (SendTaskSuccess on the state machine)', () => {
    const answers = statementsOf(roleIdOf('slack-interaction')).filter((s) =>
      [s.Action].flat().includes('states:SendTaskSuccess'),
    );

    expect(answers).toEqual([
      {
        Action: 'states:SendTaskSuccess',
        Effect: 'Allow',
        Resource: { Ref: logicalId(pipeline.stateMachine) },
      },
    ]);
  });
});

describe('alarm routing and Slack endpoint', () => {
  it('C01 the rule passes the owned alarms state changes and drops their configuration changes and other alarms', () => {
    const [rule] = (Object.values(template.findResources('AWS::Events::Rule')) as Resource[]).filter((r) =>
      JSON.stringify(r.Properties.EventPattern?.source ?? []).includes('aws.cloudwatch'),
    );
    const pattern = resolvePseudo(rule?.Properties.EventPattern) as Record<string, string[]>;
    const ownedArns = pattern.resources ?? [];
    const stateChange = loadEvent('events/cloudwatch/alarm-state-change.json');
    const configChange = loadEvent('events/cloudwatch/alarm-configuration-change.json');

    expect(ownedArns).toHaveLength(2);
    expect(rule?.Properties.State).toBe('ENABLED');
    for (const arn of ownedArns) {
      expect(matches(pattern, { ...stateChange, resources: [arn] }), arn).toBe(true);
      expect(matches(pattern, { ...configChange, resources: [arn] }), arn).toBe(false);
    }
    // The sample's own alarm is not one the pipeline owns.
    expect(matches(pattern, stateChange)).toBe(false);
  });

  it('targets triage with a dead-letter queue and a retry policy', () => {
    const triageId = pipeline.getLogicalId(
      pipeline.functions.triage?.node.defaultChild as import('aws-cdk-lib').CfnElement,
    );
    template.hasResourceProperties('AWS::Events::Rule', {
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [triageId, 'Arn'] },
          DeadLetterConfig: { Arn: Match.anyValue() },
          RetryPolicy: { MaximumRetryAttempts: 8, MaximumEventAgeInSeconds: 7200 },
        }),
      ],
    });
  });

  it('exposes slack-interaction through a Function URL with auth NONE (Slack signs; the handler verifies)', () => {
    const slackId = pipeline.getLogicalId(
      pipeline.functions['slack-interaction']?.node.defaultChild as import('aws-cdk-lib').CfnElement,
    );
    template.resourceCountIs('AWS::Lambda::Url', 1);
    template.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'NONE',
      TargetFunctionArn: { 'Fn::GetAtt': [slackId, 'Arn'] },
    });
  });

  it("the Cancel button's route: move-task posts the progress message with the button (Slack secret), Slack's signed click reaches slack-interaction through the Function URL, which records the cancel request and audit entry in the table that move-task's gate reads", () => {
    const tableId = pipeline.getLogicalId(pipeline.table.node.defaultChild as CfnElement);
    const onTable = (name: FunctionName) =>
      actionsOf(statementsOf(roleIdOf(name)).filter((s) => JSON.stringify(s.Resource).includes(tableId)));
    const moveTaskEnv = functionResource('move-task').Properties.Environment.Variables;
    const interactionEnv = functionResource('slack-interaction').Properties.Environment.Variables;
    const slackId = pipeline.getLogicalId(
      pipeline.functions['slack-interaction']?.node.defaultChild as CfnElement,
    );

    expect(moveTaskEnv.SLACK_SECRET_ARN).toBeDefined();
    expect(actionsOf(statementsOf(roleIdOf('move-task'))).has('secretsmanager:GetSecretValue')).toBe(true);
    expect(
      template.toJSON().Resources[Object.keys(template.findResources('AWS::Lambda::Url'))[0] as string]
        ?.Properties,
    ).toMatchObject({
      AuthType: 'NONE',
      TargetFunctionArn: { 'Fn::GetAtt': [slackId, 'Arn'] },
    });
    expect(interactionEnv.SLACK_SECRET_ARN).toBeDefined();
    expect(interactionEnv.TABLE_NAME).toEqual(moveTaskEnv.TABLE_NAME);
    for (const action of ['dynamodb:GetItem', 'dynamodb:PutItem'])
      expect(onTable('slack-interaction').has(action), `slack-interaction ${action}`).toBe(true);
    for (const action of ['dynamodb:GetItem', 'dynamodb:PutItem'])
      expect(onTable('move-task').has(action), `move-task ${action}`).toBe(true);
  });

  it('keeps the Slack credentials in one retained Secrets Manager secret readable only by the Slack functions', () => {
    template.resourceCountIs('AWS::SecretsManager::Secret', 1);
    template.hasResource('AWS::SecretsManager::Secret', { DeletionPolicy: 'Retain' });
    for (const name of Object.keys(pipeline.functions) as FunctionName[]) {
      const reads = actionsOf(statementsOf(roleIdOf(name))).has('secretsmanager:GetSecretValue');
      expect(reads, name).toBe(FUNCTION_ACCESS[name].slackSecret);
    }
  });

  it('alarms when an alarm event lands in the delivery DLQ, treating missing data as not breaching', () => {
    const dlqId = pipeline.getLogicalId(
      pipeline.alarmDeliveryDlq.node.defaultChild as import('aws-cdk-lib').CfnElement,
    );
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId, 'QueueName'] } }],
      Threshold: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it('encrypts the parking queue and the alarm delivery DLQ and refuses non-TLS access', () => {
    template.resourceCountIs('AWS::SQS::Queue', 2);
    template.allResourcesProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
    template.resourceCountIs('AWS::SQS::QueuePolicy', 2);
  });
});

describe('IAM', () => {
  it('grants no SQS, DynamoDB, Step Functions, Secrets Manager or Lambda action on "*"', () => {
    for (const t of [template, exampleTemplate]) {
      for (const policy of Object.values(t.findResources('AWS::IAM::Policy')) as Resource[]) {
        for (const s of policy.Properties.PolicyDocument.Statement as Statement[]) {
          if (![s.Resource].flat().includes('*')) continue;
          const actions = [s.Action].flat();
          expect(
            actions.every((a) => /^(xray|logs):/.test(a)),
            JSON.stringify(actions),
          ).toBe(true);
        }
      }
    }
  });

  it('lets the move-task function, and nobody else, start move tasks, only on registered DLQs', () => {
    const holders = (Object.keys(pipeline.functions) as FunctionName[]).filter((name) =>
      actionsOf(statementsOf(roleIdOf(name))).has('sqs:StartMessageMoveTask'),
    );
    expect(holders).toEqual(['move-task']);
    const dlqId = example.getLogicalId(example.dlq.node.defaultChild as import('aws-cdk-lib').CfnElement);
    for (const s of statementsOf(roleIdOf('move-task'))) {
      if (![s.Action].flat().includes('sqs:StartMessageMoveTask')) continue;
      expect(s.Resource).toEqual({ 'Fn::GetAtt': [dlqId, 'Arn'] });
    }
  });

  it('gives the move-task role what a move task needs: receive, delete, attributes on the DLQ, send on the sources', () => {
    const statements = statementsOf(roleIdOf('move-task'));
    const dlqActions = statements
      .filter((s) => JSON.stringify(s.Resource).includes('OrdersDlq'))
      .flatMap((s) => [s.Action].flat());
    const sourceActions = statements
      .filter((s) => JSON.stringify(s.Resource).includes('"Orders'))
      .filter((s) => !JSON.stringify(s.Resource).includes('OrdersDlq'))
      .flatMap((s) => [s.Action].flat());

    expect(dlqActions).toEqual(expect.arrayContaining([...MOVE_TASK_DLQ_ACTIONS]));
    expect(sourceActions).toContain('sqs:SendMessage');
  });
});

describe('cdk-nag', () => {
  it('reports no unacknowledged AwsSolutions finding on any stack', () => {
    const open = nagReport.violations.map(
      (v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`,
    );
    expect(open).toEqual([]);
    expect(nagReport.success).toBe(true);
  });

  it('has a written reason on every acknowledgement', () => {
    const reasons: string[] = [];
    for (const construct of app.node.findAll()) {
      for (const entry of construct.node.metadata) {
        if (entry.type !== 'aws:cdk:acknowledged-rules') continue;
        for (const ack of Object.values(entry.data as Record<string, { reason?: string } | string>)) {
          reasons.push(typeof ack === 'string' ? ack : (ack.reason ?? ''));
        }
      }
    }
    expect(reasons.length).toBeGreaterThan(0);
    expect(reasons.filter((r) => r.trim().length < 20)).toEqual([]);
  });

  it('leaves no error or warning annotation on either stack', () => {
    for (const stack of [pipeline, example] as Stack[]) {
      expect(Annotations.fromStack(stack).findError('*', Match.anyValue())).toEqual([]);
      expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([]);
    }
  });
});
