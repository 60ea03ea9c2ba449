/**
 * `PipelineTable`: the pipeline's one DynamoDB table (envelopes, incidents, registrations, the
 * redrive ledger), with the keys and index of functions/shared/platform/table.ts, the definition
 * the local stack uses too. On-demand, point-in-time recovery, TTL, encrypted at rest, deletion
 * protection, retained when the stack is deleted.
 *
 * @see https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.aws_dynamodb.Table.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/EncryptionAtRest.html
 */

import type { TableAccess } from '@dlq-redrive/cdk/function-catalog';
import { aws_dynamodb as dynamodb, aws_iam as iam, type aws_kms as kms, RemovalPolicy } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { TABLE } from '#platform/table.js';

/** Item reads a function with `read` access may make (on the table and its key index). */
export const TABLE_READ_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DescribeTable',
] as const;

/** Writes added for `readWrite` access. */
export const TABLE_WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  // BatchExecuteStatement's UPDATEs (batched envelope observations and states, Park's ledger marks)
  // and INSERTs (Park's ledger entries, functions/park/ledger-batch.ts).
  'dynamodb:PartiQLUpdate',
  'dynamodb:PartiQLInsert',
] as const;

/** Properties of {@link PipelineTable}. */
export interface PipelineTableProps {
  /**
   * A customer managed KMS key for the table.
   * @default - the AWS managed key for DynamoDB (`alias/aws/dynamodb`)
   * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/EncryptionAtRest.html
   */
  readonly encryptionKey?: kms.IKey;
}

/** See the file header. */
export class PipelineTable extends Construct {
  public readonly table: dynamodb.Table;

  public constructor(scope: Construct, id: string, props: PipelineTableProps = {}) {
    super(scope, id);
    const { encryptionKey } = props;
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE.ttlAttribute,
      ...(encryptionKey === undefined
        ? { encryption: dynamodb.TableEncryption.AWS_MANAGED }
        : { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey }),
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: TABLE.keyIndex.name,
      partitionKey: { name: TABLE.keyIndex.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE.keyIndex.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
    });
  }

  /**
   * Grants `access` on the table and its key index (named, no `index/*`), and the key's use when
   * the table has a customer managed key.
   */
  public grant(role: iam.IRole, access: TableAccess): void {
    if (access === 'none') return;
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions:
          access === 'read' ? [...TABLE_READ_ACTIONS] : [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS],
        resources: [this.table.tableArn, `${this.table.tableArn}/index/${TABLE.keyIndex.name}`],
      }),
    );
    this.table.encryptionKey?.grantEncryptDecrypt(role);
  }
}
