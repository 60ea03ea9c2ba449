/**
 * Logical ids that ignore grouping constructs. {@link PipelineStack} is composed of a few
 * constructs (table, queues, functions, Slack endpoint, workflow, routing) directly under the
 * stack; their resources keep the logical ids they had when the stack built everything itself, so
 * a deploy over an older stack updates them in place instead of replacing them (a new logical id
 * is a new resource to CloudFormation: the table, queues and secret would be created empty beside
 * the retained old ones, the state machine recreated with its running executions stopped, the
 * function URL changed, and the role names other stacks import changed under them).
 *
 * {@link flatLogicalId} computes CDK's own id (`makeUniqueId`: path components, `Default`
 * dropped, `Resource` kept in the hash but not in the readable part, an 8-character MD5 suffix)
 * from the path with the grouping constructs left out. A test checks it against CDK's ids on a
 * stack without grouping constructs, and pins the ids of the stateful resources.
 *
 * @see https://docs.aws.amazon.com/cdk/v2/guide/identifiers.html#identifiers_logical_ids
 * @see https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.Stack.html#protected-allocatewbrlogicalidcfnelement
 */
import { createHash } from 'node:crypto';
import type { CfnElement } from 'aws-cdk-lib';

const HIDDEN = 'Default';
const HIDDEN_FROM_HUMAN = 'Resource';
const HASH_LENGTH = 8;
const MAX_HUMAN_LENGTH = 240;
const MAX_ID_LENGTH = 255;

const alphanumeric = (s: string) => s.replace(/[^A-Za-z0-9]/g, '');

/** CDK's `makeUniqueId` over path components (the algorithm CDK keeps stable across versions). */
export function uniqueIdOf(components: readonly string[]): string {
  const path = components.filter((c) => c !== HIDDEN);
  if (path.length === 0) throw new Error('uniqueIdOf: no path components');
  if (path.length === 1) {
    const only = alphanumeric(path[0] as string);
    if (only.length <= MAX_ID_LENGTH) return only;
  }
  const hash = createHash('md5').update(path.join('/')).digest('hex').slice(0, HASH_LENGTH).toUpperCase();
  const human: string[] = [];
  for (const c of path) if (human.length === 0 || !(human.at(-1) as string).endsWith(c)) human.push(c);
  return (
    human
      .filter((c) => c !== HIDDEN_FROM_HUMAN)
      .map(alphanumeric)
      .join('')
      .slice(0, MAX_HUMAN_LENGTH) + hash
  );
}

/**
 * The logical id of `element` as if the constructs directly under its stack whose ids are in
 * `transparent` were not there.
 */
export function flatLogicalId(element: CfnElement, transparent: ReadonlySet<string>): string {
  const scopes = element.node.scopes;
  const below = scopes.slice(scopes.indexOf(element.stack) + 1);
  const path = below.filter((scope, i) => !(i === 0 && transparent.has(scope.node.id))).map((s) => s.node.id);
  return uniqueIdOf(path);
}
