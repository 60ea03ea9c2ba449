/**
 * The queue registry (docs/contracts.md "Stores"): each monitored DLQ's {@link QueueRegistration},
 * stored at `DLQ#<dlqArn>` / `CONFIG` (written by the CDK construct or the CLI).
 * A DLQ without a registration gets the defaults.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { QueueRegistration } from '#inventory/model.js';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { InvalidInputError } from '#platform/errors.js';
import { formatIssues } from '#platform/middleware.js';
import { keys } from '#platform/table.js';

/** The registry's operations. */
export interface QueueRegistry {
  /**
   * The parsed registration (defaults applied), or the default registration when none exists.
   * @throws InvalidInputError naming each bad field when the stored registration is invalid.
   */
  getRegistration(dlqArn: string): Promise<QueueRegistration>;
  /**
   * The stored registration (defaults applied), or null when the DLQ is not registered.
   * @throws InvalidInputError naming each bad field when the stored registration is invalid.
   */
  findRegistration?(dlqArn: string): Promise<QueueRegistration | null>;
  /** Validates and stores a registration. @throws InvalidInputError naming each bad field. */
  putRegistration(registration: unknown): Promise<QueueRegistration>;
}

/** Creates the queue registry. */
export function createQueueRegistry(
  options: { client?: DynamoDBDocumentClient; tableName?: string } = {},
): QueueRegistry {
  const client = () => options.client ?? documentClient();
  const table = options.tableName ?? pipelineConfig().tableName;
  const parse = (raw: unknown, dlqArn: string) => {
    const result = QueueRegistration.safeParse(raw);
    if (!result.success)
      throw new InvalidInputError(`invalid queue registration for ${dlqArn}`, formatIssues(result.error));
    return result.data;
  };
  const find = async (dlqArn: string) => {
    const out = await client().send(
      new GetCommand({ TableName: table, Key: { pk: keys.dlq(dlqArn), sk: keys.config } }),
    );
    if (!out.Item) return null;
    const { pk: _pk, sk: _sk, ...raw } = out.Item;
    return parse(raw, dlqArn);
  };
  return {
    findRegistration: find,
    async getRegistration(dlqArn) {
      return (await find(dlqArn)) ?? parse({ dlqArn }, dlqArn);
    },
    async putRegistration(registration) {
      const arn = (registration as { dlqArn?: unknown } | null)?.dlqArn;
      const parsed = parse(registration, typeof arn === 'string' ? arn : '(no dlqArn)');
      await client().send(
        new PutCommand({
          TableName: table,
          Item: { pk: keys.dlq(parsed.dlqArn), sk: keys.config, ...parsed },
        }),
      );
      return parsed;
    },
  };
}
