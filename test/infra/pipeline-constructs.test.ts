/**
 * The pipeline stack's composition (infra/constructs/, infra/logical-ids.ts): logical ids
 * computed as CDK computes them, the ids deployed stacks already hold kept (a changed id replaces
 * the resource), two resources never sharing an id, and props checked up front with every
 * problem in one error. Built from stub handlers with bundling skipped.
 */
import { App, Aws, CfnElement, Stack, aws_sqs as sqs } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Construct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlarmRouting } from '../../infra/constructs/alarm-routing.js';
import { SlackEndpoint } from '../../infra/constructs/slack-endpoint.js';
import { flatLogicalId, uniqueIdOf } from '../../infra/logical-ids.js';
import { PipelineStack, type PipelineStackProps } from '../../infra/pipeline-stack.js';
import { stubFunctionsDir, templateOnlyApp } from '../support/stub-functions.js';

const ENV = { account: '111122223333', region: 'us-east-1' };
let functionsDir: string;
let removeFunctionsDir: () => void;

beforeAll(() => {
  ({ dir: functionsDir, remove: removeFunctionsDir } = stubFunctionsDir('infra-constructs-'));
});

afterAll(() => removeFunctionsDir());

function pipeline(props: PipelineStackProps = {}, app = templateOnlyApp()) {
  return new PipelineStack(app, 'DlqRedrivePipeline', { env: ENV, functionsDir, ...props });
}

function idOf(stack: Stack, element: unknown): string {
  return stack.getLogicalId(element as CfnElement);
}

describe('logical ids', () => {
  it('computes the id CDK gives every resource of a stack without grouping constructs', () => {
    const stack = new Stack(new App(), 'Plain');
    const group = new Construct(stack, 'Group');
    new sqs.Queue(group, 'Queue');
    new sqs.Queue(new Construct(group, 'Default'), 'Hidden');
    new sqs.Queue(stack, 'QueueQueue');
    new sqs.Queue(new Construct(stack, 'Resource'), 'Inner', { enforceSSL: true });
    new sqs.Queue(stack, `Long${'x'.repeat(300)}`);
    const elements = stack.node.findAll().filter((c): c is CfnElement => CfnElement.isCfnElement(c));

    expect(elements.length).toBeGreaterThan(5);
    for (const element of elements) {
      expect(flatLogicalId(element, new Set()), element.node.path).toBe(stack.getLogicalId(element));
    }
    expect(uniqueIdOf(['Table', 'Resource'])).toBe('TableCD117FA1');
  });

  it('keeps the ids the pipeline had before it was split into constructs: table, queues, secret, state machine, functions, roles', () => {
    const stack = pipeline();
    const ids = {
      table: idOf(stack, stack.table.node.defaultChild),
      parkingQueue: idOf(stack, stack.parkingQueue.node.defaultChild),
      alarmDeliveryDlq: idOf(stack, stack.alarmDeliveryDlq.node.defaultChild),
      slackSecret: idOf(stack, stack.slackSecret.node.defaultChild),
      stateMachine: idOf(stack, stack.stateMachine?.node.defaultChild),
      slackInteraction: idOf(stack, stack.functions['slack-interaction']?.node.defaultChild),
      slackInteractionUrl: idOf(stack, stack.slackInteractionUrl?.node.defaultChild),
      triageRole: idOf(stack, stack.roles.triage?.node.defaultChild),
      moveTaskRole: idOf(stack, stack.roles['move-task']?.node.defaultChild),
    };

    expect(ids).toEqual({
      table: 'TableCD117FA1',
      parkingQueue: 'ParkingQueue949A420A',
      alarmDeliveryDlq: 'AlarmDeliveryDlq5788AB4E',
      slackSecret: 'SlackSecretEA96F13F',
      stateMachine: 'RedriveWorkflowEBDABB59',
      slackInteraction: 'SlackInteractionEDA62323',
      slackInteractionUrl: 'SlackInteractionFunctionUrl008472EC',
      triageRole: 'TriageRole195A9D09',
      moveTaskRole: 'MoveTaskRoleEA15224B',
    });
  });

  it('refuses two resources that would share a logical id, naming both', () => {
    const stack = pipeline();
    // Same id as the parking queue once the grouping constructs are left out.
    new sqs.Queue(stack.node.findChild('Functions'), 'ParkingQueue');

    expect(() => App.of(stack)?.synth()).toThrow(
      /logical id ParkingQueue949A420A of DlqRedrivePipeline\/(Functions|Queues)\/ParkingQueue\/Resource is already DlqRedrivePipeline\/(Queues|Functions)\/ParkingQueue\/Resource's/,
    );
  });
});

describe('props', () => {
  it('reports every bad prop of the stack in one error, with the allowed values and the value given', () => {
    expect(() =>
      pipeline({
        alarmDelivery: 'pager' as never,
        slackSecretArn: 'arn:aws:secretsmanager:us-east-1:111122223333:secret:slack',
        slackDefaultChannel: 'ops alerts',
      }),
    ).toThrow(
      'PipelineStack DlqRedrivePipeline: invalid props: alarmDelivery: must be one of eventbridge, sns, both (given: "pager"); ' +
        'slackSecretArn: must be the complete ARN of a Secrets Manager secret, arn:<partition>:secretsmanager:<region>:<account>:secret:<name>-<6 characters> (given: "arn:aws:secretsmanager:us-east-1:111122223333:secret:slack"); ' +
        'slackDefaultChannel: must be a Slack channel id or name, 1-80 characters without spaces (given: "ops alerts")',
    );
  });

  it('accepts a complete secret ARN and a token it cannot check yet', () => {
    const stack = pipeline({
      slackSecretArn: 'arn:aws:secretsmanager:us-east-1:111122223333:secret:slack-AbC123',
    });
    expect(stack.slackSecret.secretArn).toBe(
      'arn:aws:secretsmanager:us-east-1:111122223333:secret:slack-AbC123',
    );
    expect(() => pipeline({ slackDefaultChannel: Aws.ACCOUNT_ID })).not.toThrow();
  });

  it('names the alias executions start through, and refuses a name that reads as a version', () => {
    const stack = pipeline({ workflowAliasName: 'prod' });
    const template = Template.fromStack(stack);

    template.hasResourceProperties('AWS::StepFunctions::StateMachineAlias', { Name: 'prod' });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'states:StartExecution',
            Condition: { 'ForAnyValue:StringEquals': { 'states:StateMachineQualifier': ['prod'] } },
          }),
        ]),
      },
    });
    expect(() => pipeline({ workflowAliasName: '2026' })).toThrow(
      'PipelineStack DlqRedrivePipeline: invalid props: workflowAliasName: must be 1-80 of A-Z a-z 0-9 - _ and not only digits (given: "2026")',
    );
  });

  it('checks the props of a construct used on its own, naming its path', () => {
    const stack = pipeline();
    const functions = stack.node.findChild('Functions') as never;

    expect(
      () => new SlackEndpoint(new Stack(new App(), 'Mine'), 'Slack', { functions, secretArn: 'not-an-arn' }),
    ).toThrow(/^SlackEndpoint Mine\/Slack: invalid props: secretArn: must be the complete ARN/);
    expect(
      () =>
        new AlarmRouting(stack, 'MoreRouting', {
          deliveryDlq: stack.alarmDeliveryDlq,
          delivery: 'email' as never,
        }),
    ).toThrow(
      'AlarmRouting DlqRedrivePipeline/MoreRouting: invalid props: delivery: must be one of eventbridge, sns, both (given: "email")',
    );
  });
});
