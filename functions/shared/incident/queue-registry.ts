/**
 * The queue registry (docs/contracts.md "Stores"): each monitored DLQ's {@link QueueRegistration},
 * stored at `DLQ#<dlqArn>` / `CONFIG` (written by the CDK construct or the CLI).
 * A DLQ without a registration gets the defaults.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { REGISTRATION_LISTING, registrationItem } from '@dlq-redrive/contract';
import { QueueRegistration } from '#inventory/model.js';
import { documentClient } from '#platform/clients.js';
import { pipelineConfig } from '#platform/config.js';
import { InvalidInputError } from '#platform/errors.js';
import { queryIndexPartition } from '#platform/index-query.js';
import { formatIssues } from '#platform/middleware.js';
import { recordFields } from '#platform/record-shapes.js';
import { keys } from '#platform/table.js';

// The stored item's layout is shared with the `MonitoredDlq` construct, which writes it too.
export { REGISTRATION_LISTING, registrationItem };

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
  /**
   * Every stored registration (construct or CLI), by DLQ ARN, from the index's `REGISTRATIONS`
   * partition. A stored item that no longer parses is returned with its problems, not thrown.
   */
  listRegistrations(): Promise<
    Array<{ registration: QueueRegistration } | { dlqArn: string; problems: string[] }>
  >;
}

/**
 * The registration's own fields of a stored item (keys, index attributes and shape version removed).
 * @throws UnknownShapeVersionError when a newer release wrote it.
 */
function fieldsOf(item: Record<string, unknown>): Record<string, unknown> {
  return recordFields<Record<string, unknown>>(
    'registration',
    item,
    `registration of ${String(item.dlqArn)}`,
  );
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
    return parse(fieldsOf(out.Item), dlqArn);
  };
  return {
    findRegistration: find,
    async getRegistration(dlqArn) {
      const out = await client().send(
        new GetCommand({ TableName: table, Key: { pk: keys.dlq(dlqArn), sk: keys.config } }),
      );
      if (!out.Item) return parse({ dlqArn }, dlqArn);
      return parse(fieldsOf(out.Item), dlqArn);
    },
    async putRegistration(registration) {
      const arn = (registration as { dlqArn?: unknown } | null)?.dlqArn;
      const parsed = parse(registration, typeof arn === 'string' ? arn : '(no dlqArn)');
      await client().send(
        new PutCommand({
          TableName: table,
          Item: registrationItem(parsed),
        }),
      );
      return parsed;
    },
    async listRegistrations() {
      return (await queryIndexPartition(client(), table, REGISTRATION_LISTING)).map((item) => {
        const result = QueueRegistration.safeParse(fieldsOf(item));
        return result.success
          ? { registration: result.data }
          : { dlqArn: String(item.dlqArn), problems: formatIssues(result.error) };
      });
    },
  };
}
