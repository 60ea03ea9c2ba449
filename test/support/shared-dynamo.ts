/**
 * vitest setup file (runs in each worker before each test file is imported): points
 * `startLocalStack()` at the run's shared DynamoDB Local (test/support/global-setup.ts) and gives
 * the file a table name of its own, before any module reads TABLE_NAME.
 */
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { SHARED_DYNAMODB_ENV } from '../../local/shared-dynamo-env.js';

const endpoint = inject('dynamoEndpoint');
// Unit-only runs start no shared JVM: a stack a unit test starts anyway gets a JVM of its own.
if (endpoint) process.env[SHARED_DYNAMODB_ENV] = endpoint;
process.env.TABLE_NAME = `dlq-redrive-${randomBytes(4).toString('hex')}`;
