/**
 * The infra helpers the stack and its tests rely on: ASL placeholder and Task resource discovery,
 * substitutions, the SDK-command to IAM-action mapping and the function catalogue's naming.
 */

import { FUNCTION_ACCESS, pascalOf, placeholderOf } from '@dlq-redrive/cdk/function-catalog';
import { describe, expect, it } from 'vitest';
import { aslPlaceholders, aslTaskResources, substitutionsFor } from '../../infra/asl.js';
import { actionsOfImport } from '../../infra/sdk-actions.js';

const placeholder = (name: string) => `$${'{'}${name}}`;

describe('ASL helpers', () => {
  const definition = JSON.stringify({
    StartAt: 'A',
    States: {
      A: { Type: 'Task', Resource: placeholder('ParkFunctionArn'), Next: 'B' },
      B: {
        Type: 'Parallel',
        Branches: [
          {
            StartAt: 'C',
            States: { C: { Type: 'Task', Resource: placeholder('NotifyFunctionArn'), End: true } },
          },
        ],
        Next: 'D',
      },
      D: {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
        Parameters: { FunctionName: placeholder('RequestApprovalFunctionArn') },
        End: true,
      },
    },
  });

  it('finds every placeholder once, including those inside Parameters and nested branches', () => {
    expect(aslPlaceholders(definition)).toEqual([
      'NotifyFunctionArn',
      'ParkFunctionArn',
      'RequestApprovalFunctionArn',
    ]);
  });

  it('lists the Task resources of nested states too', () => {
    expect(aslTaskResources(JSON.parse(definition))).toEqual([
      placeholder('NotifyFunctionArn'),
      placeholder('ParkFunctionArn'),
      'arn:aws:states:::lambda:invoke.waitForTaskToken',
    ]);
  });

  it('returns exactly the substitutions the definition uses, and names every missing one', () => {
    const available = {
      ParkFunctionArn: 'arn:park',
      NotifyFunctionArn: 'arn:notify',
      RequestApprovalFunctionArn: 'arn:approval',
      TriageFunctionArn: 'arn:triage',
    };

    expect(substitutionsFor(definition, available)).toEqual({
      NotifyFunctionArn: 'arn:notify',
      ParkFunctionArn: 'arn:park',
      RequestApprovalFunctionArn: 'arn:approval',
    });
    expect(() => substitutionsFor(definition, { ParkFunctionArn: 'arn:park' })).toThrow(
      /no value: \$\{NotifyFunctionArn\}, \$\{RequestApprovalFunctionArn\}/,
    );
  });
});

describe('SDK command to IAM action mapping', () => {
  it('maps SQS batch commands to the single-message actions IAM authorises them with', () => {
    expect(actionsOfImport('@aws-sdk/client-sqs', 'SendMessageBatchCommand')).toEqual(['sqs:SendMessage']);
    expect(actionsOfImport('@aws-sdk/client-sqs', 'ChangeMessageVisibilityBatchCommand')).toEqual([
      'sqs:ChangeMessageVisibility',
    ]);
    expect(actionsOfImport('@aws-sdk/client-sqs', 'StartMessageMoveTaskCommand')).toEqual([
      'sqs:StartMessageMoveTask',
    ]);
  });

  it('maps document-client commands and transactions to DynamoDB item actions', () => {
    expect(actionsOfImport('@aws-sdk/lib-dynamodb', 'BatchWriteCommand')).toEqual([
      'dynamodb:BatchWriteItem',
    ]);
    expect(actionsOfImport('@aws-sdk/lib-dynamodb', 'TransactWriteCommand')).toEqual([
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:ConditionCheckItem',
    ]);
    expect(actionsOfImport('@aws-sdk/client-dynamodb', 'paginateQuery')).toEqual(['dynamodb:Query']);
  });

  it('maps Lambda Invoke to lambda:InvokeFunction and ignores bindings that are not calls', () => {
    expect(actionsOfImport('@aws-sdk/client-lambda', 'InvokeCommand')).toEqual(['lambda:InvokeFunction']);
    expect(actionsOfImport('@aws-sdk/client-dynamodb', 'ConditionalCheckFailedException')).toEqual([]);
    expect(actionsOfImport('@aws-sdk/lib-dynamodb', 'DynamoDBDocumentClient')).toEqual([]);
  });
});

describe('function catalogue', () => {
  it('derives the ASL placeholder and construct id from the folder name as docs/contracts.md spells them', () => {
    expect(placeholderOf('validate-input')).toBe('ValidateInputFunctionArn');
    expect(placeholderOf('move-task')).toBe('MoveTaskFunctionArn');
    expect(pascalOf('slack-interaction')).toBe('SlackInteraction');
  });

  it("lets only move-task start move tasks; RecordFailure and execution-ended may only cancel their run's", () => {
    const holders = (action: string) =>
      Object.entries(FUNCTION_ACCESS)
        .filter(([, access]) => access.dlq.includes(action))
        .map(([name]) => name);

    expect(holders('sqs:StartMessageMoveTask')).toEqual(['move-task']);
    expect(holders('sqs:CancelMessageMoveTask').sort()).toEqual(['execution-ended', 'move-task', 'notify']);
  });
});
