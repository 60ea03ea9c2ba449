/**
 * Which IAM actions a function's code can call: bundle its handler with esbuild (tree-shaken,
 * packages left external), read the AWS SDK v3 commands and paginators the output still imports
 * and map each to its IAM action. Used by the infra tests to prove every role covers what its
 * code calls, and holds no SQS, Step Functions, Secrets Manager or Lambda action it does not call.
 *
 * @see https://docs.aws.amazon.com/service-authorization/latest/reference/reference_policies_actions-resources-contextkeys.html
 * @see https://esbuild.github.io/api/#packages
 */
import { join } from 'node:path';
import { build } from 'esbuild';

/** IAM service prefix of each AWS SDK v3 package whose commands map one-to-one to actions. */
const SERVICE_OF: Readonly<Record<string, string>> = {
  '@aws-sdk/client-sqs': 'sqs',
  '@aws-sdk/client-dynamodb': 'dynamodb',
  '@aws-sdk/client-sfn': 'states',
  '@aws-sdk/client-secrets-manager': 'secretsmanager',
  '@aws-sdk/client-lambda': 'lambda',
  '@aws-sdk/client-cloudwatch': 'cloudwatch',
  '@aws-sdk/client-kms': 'kms',
  '@aws-sdk/client-iam': 'iam',
  '@aws-sdk/client-s3': 's3',
  '@aws-sdk/client-sns': 'sns',
  '@aws-sdk/client-eventbridge': 'events',
  '@aws-sdk/client-sts': 'sts',
};

/** Commands whose IAM action differs from the command name. */
const SPECIAL: Readonly<Record<string, readonly string[]>> = {
  'sqs:SendMessageBatch': ['sqs:SendMessage'],
  'sqs:DeleteMessageBatch': ['sqs:DeleteMessage'],
  'sqs:ChangeMessageVisibilityBatch': ['sqs:ChangeMessageVisibility'],
  'lambda:Invoke': ['lambda:InvokeFunction'],
  'sns:PublishBatch': ['sns:Publish'],
  'lambda:InvokeAsync': ['lambda:InvokeFunction'],
  // Transactions are authorised per item action.
  'dynamodb:TransactWriteItems': ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
  'dynamodb:TransactGetItems': ['dynamodb:GetItem'],
  // HeadObject is authorised as GetObject (and answers 403 instead of 404 without ListBucket).
  's3:HeadObject': ['s3:GetObject'],
};

/** The DynamoDB document client's commands. */
const DOCUMENT_CLIENT: Readonly<Record<string, readonly string[]>> = {
  GetCommand: ['dynamodb:GetItem'],
  PutCommand: ['dynamodb:PutItem'],
  UpdateCommand: ['dynamodb:UpdateItem'],
  DeleteCommand: ['dynamodb:DeleteItem'],
  QueryCommand: ['dynamodb:Query'],
  ScanCommand: ['dynamodb:Scan'],
  BatchGetCommand: ['dynamodb:BatchGetItem'],
  BatchWriteCommand: ['dynamodb:BatchWriteItem'],
  // PartiQL is authorised per statement kind; the pipeline's batched statements are UPDATEs
  // (envelope observation fields and states, the ledger's marks) and INSERTs (Park's ledger
  // entries, functions/park/ledger-batch.ts).
  BatchExecuteStatementCommand: ['dynamodb:PartiQLUpdate', 'dynamodb:PartiQLInsert'],
  TransactWriteCommand: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
  TransactGetCommand: ['dynamodb:GetItem'],
  paginateQuery: ['dynamodb:Query'],
  paginateScan: ['dynamodb:Scan'],
};

/** Maps an imported SDK binding to IAM actions (empty for anything that is not a call). */
export function actionsOfImport(pkg: string, binding: string): string[] {
  if (pkg === '@aws-sdk/lib-dynamodb') return [...(DOCUMENT_CLIENT[binding] ?? [])];
  const service = SERVICE_OF[pkg];
  if (service === undefined) return [];
  const operation = /^(\w+)Command$/.exec(binding)?.[1] ?? /^paginate(\w+)$/.exec(binding)?.[1];
  if (operation === undefined) return [];
  const action = `${service}:${operation}`;
  return [...(SPECIAL[action] ?? [action])];
}

/**
 * The IAM actions a handler's reachable code can call, sorted.
 * @param functionsDir - the folder holding `<name>/handler.ts`.
 */
export async function sdkActionsOf(functionsDir: string, name: string): Promise<string[]> {
  const result = await build({
    entryPoints: [join(functionsDir, name, 'handler.ts')],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    packages: 'external',
    logLevel: 'silent',
  });
  const text = result.outputFiles.map((f) => f.text).join('\n');
  const actions = new Set<string>();
  for (const match of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*["'](@aws-sdk\/[^"']+)["']/g)) {
    const pkg = match[2] as string;
    for (const raw of (match[1] as string).split(',')) {
      const binding = raw.trim().split(/\s+as\s+/)[0] ?? '';
      for (const action of actionsOfImport(pkg, binding)) actions.add(action);
    }
  }
  return [...actions].sort();
}
