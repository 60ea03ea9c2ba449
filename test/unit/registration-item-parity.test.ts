/**
 * The registration item of `@dlq-redrive/contract` (written by the MonitoredDlq construct and the
 * CLI) lands where the pipeline's table layout reads it: `DLQ#<dlqArn>` / `CONFIG`, the index's
 * listing keys, the registration's shape version.
 */
import { registrationItem } from '@dlq-redrive/contract';
import { describe, expect, it } from 'vitest';
import { QueueRegistration } from '#inventory/model.js';
import { SHAPE_VERSIONS } from '#platform/record-shapes.js';
import { keys, TABLE } from '#platform/table.js';

describe('registration item of the contract package', () => {
  it('uses the table keys, index attributes and shape version of the pipeline table', () => {
    const dlqArn = 'arn:aws:sqs:us-east-1:111122223333:orders-dlq';
    const item: Record<string, unknown> = registrationItem(QueueRegistration.parse({ dlqArn }));

    expect(item[TABLE.partitionKey]).toBe(keys.dlq(dlqArn));
    expect(item[TABLE.sortKey]).toBe(keys.config);
    expect(item[TABLE.keyIndex.partitionKey]).toBe('REGISTRATIONS');
    expect(item[TABLE.keyIndex.sortKey]).toBe(dlqArn);
    expect(item.shapeVersion).toBe(SHAPE_VERSIONS.registration);
  });
});
