/**
 * `SlackEndpoint`: everything Slack needs from the stack.
 * - The Slack secret: JSON `{"botToken", "signingSecret"}` in Secrets Manager, new (placeholder
 *   values, retained on stack deletion) or an existing one given by its complete ARN; readable
 *   only by the functions whose catalogue entry says `slackSecret`, which get its ARN in
 *   `SLACK_SECRET_ARN`.
 * - The interactivity request URL: a Lambda Function URL with auth `NONE` on `slack-interaction`.
 *   Slack cannot sign with SigV4; it signs each request with the signing secret, which the
 *   handler verifies over the raw body before anything else (C15).
 * - `SLACK_DEFAULT_CHANNEL` on `request-approval`, for DLQs whose registration names no channel.
 *
 * @see https://api.slack.com/authentication/verifying-requests-from-slack
 * @see https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html
 * @see https://docs.aws.amazon.com/secretsmanager/latest/userguide/reference_secret_json_structure.html
 */

import { FUNCTION_ACCESS } from '@dlq-redrive/cdk/function-catalog';
import { aws_lambda as lambda, RemovalPolicy, aws_secretsmanager as secretsmanager } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { acknowledge } from '../nag.js';
import { completeSecretArnProblem, slackChannelProblem, throwIfInvalid } from '../validation.js';
import type { PipelineFunctions } from './pipeline-functions.js';

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
    }
    if (props.defaultChannel !== undefined) {
      props.functions.functions['request-approval']?.addEnvironment(
        'SLACK_DEFAULT_CHANNEL',
        props.defaultChannel,
      );
    }
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
