/**
 * Interim reader of queue registrations (`DLQ#<dlqArn>` / `CONFIG`, see table.ts) until
 * `functions/shared/queue-registry.ts` lands; same contract as its `getRegistration`: the parsed
 * registration with defaults applied, or the default registration when none exists.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_GetItem.html
 */
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { awsErrorName, InvalidInputError, toRedriveError } from '../shared/errors.js';
import { formatIssues } from '../shared/middleware.js';
import { QueueRegistration } from '../shared/model.js';
import { keys, TABLE } from '../shared/table.js';
import type { RegistrationSource } from './validate-input.js';

// The ARN is the item's key: parse the rest (model.ts's dlqArn pattern does not admit `.fifo` names).
const RegistrationBody = QueueRegistration.omit({ dlqArn: true });
const FIELDS = Object.keys(RegistrationBody.shape);

/**
 * A {@link RegistrationSource} reading the pipeline table with a strongly consistent GetItem.
 *
 * @throws InvalidInputError (`Redrive.InvalidInput`) when the stored registration is malformed.
 */
export function createRegistrationReader(doc: DynamoDBDocumentClient, tableName: string): RegistrationSource {
  return {
    async getRegistration(dlqArn) {
      let item: Record<string, unknown> | undefined;
      try {
        const out = await doc.send(
          new GetCommand({
            TableName: tableName,
            Key: { [TABLE.partitionKey]: keys.dlq(dlqArn), [TABLE.sortKey]: keys.config },
            ConsistentRead: true,
          }),
        );
        item = out.Item;
      } catch (error) {
        throw awsErrorName(error) === undefined ? error : toRedriveError(error);
      }
      const body = Object.fromEntries(Object.entries(item ?? {}).filter(([k]) => FIELDS.includes(k)));
      const parsed = RegistrationBody.safeParse(body);
      if (!parsed.success) {
        throw new InvalidInputError(
          `invalid queue registration of ${dlqArn}`,
          formatIssues(parsed.error).map((p) => `registration.${p}`),
        );
      }
      return { dlqArn, ...parsed.data };
    },
  };
}
