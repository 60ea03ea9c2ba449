/**
 * `SlackEndpoint`: everything Slack needs from the stack.
 * - The Slack secret: JSON `{"botToken", "signingSecret"}` in Secrets Manager, new (placeholder
 *   values, retained on stack deletion) or an existing one given by its complete ARN; readable
 *   only by the functions whose catalogue entry says `slackSecret`, which get its ARN in
 *   `SLACK_SECRET_ARN`.
 * - The retention reminder's schedule: an EventBridge rule that runs `approval-reminder` every
 *   {@link REMINDER_CHECK_MINUTES} minutes (docs/slack.md, "Retention reminder").
 * - The interactivity request URL: a Lambda Function URL with auth `NONE` on `slack-interaction`.
 *   Slack cannot sign with SigV4; it signs each request with the signing secret, which the
 *   handler verifies over the raw body before anything else.
 * - `SLACK_DEFAULT_CHANNEL` on the same functions, for DLQs whose registration names no channel:
 *   the approval, the ramp's progress and the notifier's messages all fall back to it.
 *
 * @see https://api.slack.com/authentication/verifying-requests-from-slack
 * @see https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-rule-schedule.html
 * @see https://docs.aws.amazon.com/secretsmanager/latest/userguide/reference_secret_json_structure.html
 */

import { FUNCTION_ACCESS } from '@dlq-redrive/cdk/function-catalog';
import {
  Duration,
  aws_events as events,
  aws_lambda as lambda,
  RemovalPolicy,
  aws_secretsmanager as secretsmanager,
  aws_events_targets as targets,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { acknowledge } from '../nag.js';
import { completeSecretArnProblem, slackChannelProblem, throwIfInvalid } from '../validation.js';
import type { PipelineFunctions } from './pipeline-functions.js';

/** How often the retention reminder's check runs, minutes: a reminder comes at most this late. */
export const REMINDER_CHECK_MINUTES = 10;

/** Properties of {@link SlackEndpoint}. */
export interface SlackEndpointProps {
  /** The pipeline's functions: the Slack ones get the secret, the interaction gets the URL. */
  readonly functions: PipelineFunctions;
  /**
   * The complete ARN of an existing Secrets Manager secret holding JSON
   * `{"signingSecret": "...", "botToken": "xoxb-..."}`.
   * @default - a new secret with placeholder values, filled in after the first deploy (docs/deploy.md)
   * @see https://docs.aws.amazon.com/secretsmanager/latest/userguide/reference_secret_json_structure.html
   */
  readonly secretArn?: string;
  /**
   * Slack channel for approvals of DLQs whose registration names none (`SLACK_DEFAULT_CHANNEL`).
   * @default - none: such a DLQ's approval fails with a message naming `slackChannel`
   * @see https://api.slack.com/methods/chat.postMessage#arg_channel
   */
  readonly defaultChannel?: string;
}

/** The problems of `props` (for {@link PipelineStack}, which checks all of its props at once). */
export function slackEndpointProblems(
  props: { readonly secretArn?: string | undefined; readonly defaultChannel?: string | undefined },
  names: { secretArn: string; defaultChannel: string } = {
    secretArn: 'secretArn',
    defaultChannel: 'defaultChannel',
  },
): string[] {
  return [
    ...completeSecretArnProblem(names.secretArn, props.secretArn),
    ...slackChannelProblem(names.defaultChannel, props.defaultChannel),
  ];
}

/** See the file header. */
export class SlackEndpoint extends Construct {
  /** The Slack signing secret and bot token. */
  public readonly secret: secretsmanager.ISecret | secretsmanager.Secret;
  /** The Slack interactivity request URL (when the interaction function exists). */
  public readonly interactionUrl: lambda.FunctionUrl | undefined;
  /** Runs the retention reminder's check (when the function exists). */
  public readonly reminderSchedule: events.Rule | undefined;

  public constructor(scope: Construct, id: string, props: SlackEndpointProps) {
    super(scope, id);
    throwIfInvalid('SlackEndpoint', this, slackEndpointProblems(props));

    this.secret =
      props.secretArn === undefined
        ? this.newSecret()
        : secretsmanager.Secret.fromSecretCompleteArn(this, 'SlackSecret', props.secretArn);

    for (const [name, fn, role] of props.functions.entries()) {
      if (!FUNCTION_ACCESS[name].slackSecret) continue;
      this.secret.grantRead(role);
      fn.addEnvironment('SLACK_SECRET_ARN', this.secret.secretArn);
      if (props.defaultChannel !== undefined)
        fn.addEnvironment('SLACK_DEFAULT_CHANNEL', props.defaultChannel);
    }
    const reminder = props.functions.functions['approval-reminder'];
    this.reminderSchedule =
      reminder === undefined
        ? undefined
        : new events.Rule(this, 'ReminderSchedule', {
            description: 'dlq-redrive: retention reminders of waiting approvals (docs/slack.md)',
            schedule: events.Schedule.rate(Duration.minutes(REMINDER_CHECK_MINUTES)),
            targets: [new targets.LambdaFunction(reminder, { retryAttempts: 2 })],
          });
    this.interactionUrl = props.functions.functions['slack-interaction']?.addFunctionUrl({
      authType: lambda.FunctionUrlAuthType.NONE,
    });
  }

  private newSecret(): secretsmanager.Secret {
    const secret = new secretsmanager.Secret(this, 'SlackSecret', {
      description:
        'Slack app credentials for the DLQ redrive pipeline: JSON {"signingSecret", "botToken"}. Replace the placeholders after deploy.',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ botToken: 'xoxb-REPLACE-ME' }),
        generateStringKey: 'signingSecret',
        excludePunctuation: true,
      },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(secret, {
      id: 'AwsSolutions-SMG4',
      reason:
        'Slack issues the signing secret and bot token; Secrets Manager cannot rotate them. Rotate in the Slack app settings and put the new values here (docs/deploy.md).',
    });
    return secret;
  }
}
