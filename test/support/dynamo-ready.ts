/**
 * vitest setup file of the projects whose files start local stacks (after shared-dynamo.ts):
 * waits until the run's shared DynamoDB Local answers. The global setup launches the JVM without
 * waiting for it (test/support/global-setup.ts); files that need no DynamoDB do not load this.
 */
import { inject } from 'vitest';
import { waitUntilDynamoAnswers } from '../../local/dynamo-local.js';
import { scaled } from './timeouts.js';

const endpoint = inject('dynamoEndpoint');
if (endpoint) await waitUntilDynamoAnswers(endpoint, scaled(180_000));
