/**
 * The pipeline roles' IAM policies as CDK synthesizes them, for the judge (judge.ts): the demo app
 * (the pipeline and the example stack whose `MonitoredDlq` grants the queue access) synthesized
 * without bundling (the policies do not depend on the bundles), cached by a hash of `infra/`,
 * `statemachines/`, packages/cdk and packages/contract, and the function folders, and each function role's statements collected across
 * both stacks with `Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Select`, `Fn::Split` and `Fn::ImportValue`
 * resolved by a caller's {@link Resolver} (tests name resources by logical id; the local stack by
 * the resources it created).
 *
 * @see https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/intrinsic-function-reference.html
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { FUNCTION_NAMES, type FunctionName, pascalOf } from '@dlq-redrive/cdk/function-catalog';
import type { PolicyStatement } from '../../functions/preflight/policy-document.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const CACHE_DIR = join(ROOT, 'node_modules', '.cache', 'dlq-redrive-iam');

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation templates are untyped JSON.
type Json = any;
/** Stack name -> its template. */
export type Templates = Readonly<Record<string, Json>>;

/** A reference to a resource of a template, to be named. */
export interface ResourceRef {
  readonly stack: string;
  readonly logicalId: string;
  /** The resource's `Type` (`AWS::SQS::Queue`). */
  readonly type: string;
  /** `null` for `Ref`, else the `Fn::GetAtt` attribute (`Arn`, `QueueName`). */
  readonly attribute: string | null;
}

/** Names a referenced resource; pseudo parameters come from {@link ResolveContext}. */
export type Resolver = (ref: ResourceRef) => string;

/** What a template's pseudo parameters and references resolve to. */
export interface ResolveContext {
  readonly accountId: string;
  readonly region: string;
  readonly resolve: Resolver;
}

/** A function role's statements as synthesized, resolved; `origin` names the policy resource. */
export interface RoleStatement extends PolicyStatement {
  readonly origin: { stack: string; policy: string };
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? filesUnder(join(dir, d.name)) : [join(dir, d.name)],
  );
}

/**
 * The hash the cache is keyed by: every file of infra/, statemachines/ and the construct and
 * contract packages' sources, and which handlers exist.
 */
export function templateHash(): string {
  const hash = createHash('sha256');
  for (const file of [
    ...filesUnder(join(ROOT, 'infra')),
    ...filesUnder(join(ROOT, 'statemachines')),
    ...filesUnder(join(ROOT, 'packages', 'cdk', 'src')),
    ...filesUnder(join(ROOT, 'packages', 'contract', 'src')),
  ].sort()) {
    hash.update(relative(ROOT, file)).update(readFileSync(file));
  }
  for (const name of FUNCTION_NAMES)
    hash.update(`${name}:${existsSync(join(ROOT, 'functions', name, 'handler.ts'))}`);
  return hash.digest('hex').slice(0, 16);
}

/**
 * The demo app's templates, synthesized once per hash of `infra/` (no bundling: CDK's
 * `aws:cdk:bundling-stacks` context set to none), then read from the cache.
 */
export async function demoTemplates(): Promise<Templates> {
  const file = join(CACHE_DIR, `templates-${templateHash()}.json`);
  if (existsSync(file) && statSync(file).size > 0) return JSON.parse(readFileSync(file, 'utf8')) as Templates;
  const { App, Stack } = await import('aws-cdk-lib');
  const { buildDemoApp } = await import('../../infra/demo-app.js');
  mkdirSync(CACHE_DIR, { recursive: true });
  // Its own assembly directory and an atomic rename: parallel test files may synthesize at once.
  const outdir = mkdtempSync(join(CACHE_DIR, 'cdk.out-'));
  try {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, outdir });
    buildDemoApp(app);
    const assembly = app.synth();
    const templates: Record<string, Json> = {};
    for (const stack of app.node.children.filter((c): c is InstanceType<typeof Stack> => Stack.isStack(c)))
      templates[stack.stackName] = assembly.getStackByName(stack.stackName).template;
    writeFileSync(`${outdir}.json`, JSON.stringify(templates));
    renameSync(`${outdir}.json`, file);
    return templates;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** Resolves the intrinsic functions of one template value. @throws Error naming what it cannot resolve. */
export function resolveValue(value: Json, stack: string, templates: Templates, ctx: ResolveContext): Json {
  const again = (v: Json, s = stack) => resolveValue(v, s, templates, ctx);
  if (Array.isArray(value)) return value.map((v) => again(v));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  if (keys.length === 1) {
    const [fn] = keys as [string];
    const arg = value[fn];
    if (fn === 'Ref') {
      if (arg === 'AWS::Partition') return 'aws';
      if (arg === 'AWS::Region') return ctx.region;
      if (arg === 'AWS::AccountId') return ctx.accountId;
      if (arg === 'AWS::URLSuffix') return 'amazonaws.com';
      return ctx.resolve(refOf(templates, stack, String(arg), null));
    }
    if (fn === 'Fn::GetAtt') return ctx.resolve(refOf(templates, stack, String(arg[0]), String(arg[1])));
    if (fn === 'Fn::Join') return (again(arg[1]) as string[]).join(arg[0]);
    if (fn === 'Fn::Select') return (again(arg[1]) as string[])[Number(again(arg[0]))];
    if (fn === 'Fn::Split') return String(again(arg[1])).split(arg[0]);
    if (fn === 'Fn::ImportValue') return exported(String(again(arg)), templates, ctx);
    if (fn.startsWith('Fn::')) throw new Error(`${stack}: cannot resolve ${fn}`);
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, again(v)]));
}

function refOf(
  templates: Templates,
  stack: string,
  logicalId: string,
  attribute: string | null,
): ResourceRef {
  const type = templates[stack]?.Resources?.[logicalId]?.Type;
  if (typeof type !== 'string') throw new Error(`${stack}: no resource ${logicalId} to reference`);
  return { stack, logicalId, type, attribute };
}

function exported(name: string, templates: Templates, ctx: ResolveContext): Json {
  for (const [stack, template] of Object.entries(templates)) {
    for (const output of Object.values<Json>(template.Outputs ?? {})) {
      if (output.Export && resolveValue(output.Export.Name, stack, templates, ctx) === name)
        return resolveValue(output.Value, stack, templates, ctx);
    }
  }
  throw new Error(`no stack exports ${name}`);
}

/** The pipeline stack's logical id of a function's role (`Park` -> `ParkRole9E733DC4`). */
export function roleLogicalId(
  templates: Templates,
  name: FunctionName,
): { stack: string; logicalId: string } {
  const prefix = new RegExp(`^${pascalOf(name)}Role[0-9A-F]{8}$`);
  for (const [stack, template] of Object.entries(templates)) {
    for (const [id, resource] of Object.entries<Json>(template.Resources ?? {}))
      if (resource.Type === 'AWS::IAM::Role' && prefix.test(id)) return { stack, logicalId: id };
  }
  throw new Error(`no role of ${name} in the templates`);
}

/**
 * Every statement attached to each function's role (identity policies: the role's own and the
 * `MonitoredDlq` grants of the example stack), resolved.
 */
export function rolePolicies(
  templates: Templates,
  ctx: ResolveContext,
): Record<FunctionName, RoleStatement[]> {
  const byRoleName = new Map<string, FunctionName>();
  for (const name of FUNCTION_NAMES) {
    const role = roleLogicalId(templates, name);
    byRoleName.set(ctx.resolve({ ...role, type: 'AWS::IAM::Role', attribute: null }), name);
  }
  const out = Object.fromEntries(FUNCTION_NAMES.map((n) => [n, [] as RoleStatement[]])) as Record<
    FunctionName,
    RoleStatement[]
  >;
  for (const [stack, template] of Object.entries(templates)) {
    for (const [id, resource] of Object.entries<Json>(template.Resources ?? {})) {
      if (resource.Type !== 'AWS::IAM::Policy') continue;
      const roles = resolveValue(resource.Properties.Roles ?? [], stack, templates, ctx) as string[];
      const document = resolveValue(resource.Properties.PolicyDocument, stack, templates, ctx);
      for (const role of roles) {
        const name = byRoleName.get(role);
        if (name === undefined) continue;
        for (const s of [document.Statement].flat()) out[name].push({ ...s, origin: { stack, policy: id } });
      }
    }
  }
  return out;
}

/**
 * Names every resource after its logical id, in the shapes AWS gives (queue URL for a queue's
 * `Ref`, ARNs for `Arn`): enough to judge the templates without a deploy.
 */
export function logicalIdResolver(accountId: string, region: string): Resolver {
  const arn = (service: string, rest: string) => `arn:aws:${service}:${region}:${accountId}:${rest}`;
  return ({ logicalId: id, type, attribute }) => {
    switch (`${type}.${attribute ?? 'Ref'}`) {
      case 'AWS::SQS::Queue.Ref':
      case 'AWS::SQS::Queue.QueueUrl':
        return `https://sqs.${region}.amazonaws.com/${accountId}/${id}`;
      case 'AWS::SQS::Queue.Arn':
        return arn('sqs', id);
      case 'AWS::DynamoDB::Table.Arn':
        return arn('dynamodb', `table/${id}`);
      case 'AWS::StepFunctions::StateMachine.Ref':
        return arn('states', `stateMachine:${id}`);
      case 'AWS::Lambda::Function.Arn':
        return arn('lambda', `function:${id}`);
      case 'AWS::IAM::Role.Arn':
        return `arn:aws:iam::${accountId}:role/${id}`;
      case 'AWS::SecretsManager::Secret.Ref':
        return arn('secretsmanager', `secret:${id}-AbCdEf`);
      case 'AWS::Logs::LogGroup.Arn':
        return arn('logs', `log-group:${id}:*`);
      case 'AWS::KMS::Key.Arn':
        return arn('kms', `key/${id}`);
      case 'AWS::SNS::Topic.Ref':
        return arn('sns', id);
      default:
        return id;
    }
  };
}
