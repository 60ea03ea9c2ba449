/**
 * The configuration module (functions/shared/platform/config.ts): every variable the pipeline
 * reads, validated once, bad values named; and the wiring rules it exists for: no other file of
 * functions/ reads process.env or builds an AWS SDK client.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sharedNotifier } from '#approval/slack-notifier.js';
import { loadSlackSecrets } from '#approval/slack-secrets.js';
import { resetClients, sqsClient } from '#platform/clients.js';
import { pipelineConfig, readConfig } from '#platform/config.js';
import { ConfigurationError } from '#platform/errors.js';
import { sharedRampProgress } from '../../functions/move-task/slack-progress.js';
import { functionSources, withoutComments } from '../support/source-files.js';

describe('readConfig', () => {
  it('applies the documented defaults when nothing is set', () => {
    const config = readConfig({});
    expect(config.tableName).toBe('dlq-redrive');
    expect(config.region).toBe('us-east-1');
    expect(config.parkingQueueUrl).toBeUndefined();
    expect(config.approvalTimeoutSeconds).toBeUndefined();
    expect(config.slack.apiUrl).toBe('https://slack.com/api/');
    expect(config.slack.responseUrlPrefixes).toEqual(['https://hooks.slack.com/']);
    expect(config.triage).toEqual({
      budgets: { messageBudget: 5000, pageBudget: 110_000, safetyMarginMs: 15_000 },
      alarmQueueMap: {},
    });
  });

  it('reads every variable into its field, numbers as numbers and lists split on commas', () => {
    const config = readConfig({
      TABLE_NAME: 'redrive-prod',
      AWS_REGION: 'eu-west-1',
      PARKING_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/parking',
      STATE_MACHINE_ARN: 'arn:aws:states:eu-west-1:123456789012:stateMachine:redrive',
      APPROVAL_TIMEOUT_SECONDS: '600',
      REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS: '45',
      SLACK_BOT_TOKEN: 'xoxb-1',
      SLACK_DEFAULT_CHANNEL: 'C0OPS',
      SLACK_RESPONSE_URL_PREFIXES: 'http://127.0.0.1:9/, https://hooks.slack.com/',
      TRIAGE_PAGE_BUDGET: '500',
      ALARM_QUEUE_MAP: '{"orders-dlq-alarm":["orders-dlq"]}',
    });
    expect(config).toMatchObject({
      tableName: 'redrive-prod',
      region: 'eu-west-1',
      parkingQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/parking',
      stateMachineArn: 'arn:aws:states:eu-west-1:123456789012:stateMachine:redrive',
      approvalTimeoutSeconds: 600,
      receiveVisibilityTimeoutSeconds: 45,
      slack: {
        botToken: 'xoxb-1',
        defaultChannel: 'C0OPS',
        responseUrlPrefixes: ['http://127.0.0.1:9/', 'https://hooks.slack.com/'],
      },
      triage: { budgets: { pageBudget: 500 }, alarmQueueMap: { 'orders-dlq-alarm': ['orders-dlq'] } },
    });
  });

  it('treats an empty variable as unset', () => {
    const config = readConfig({ TABLE_NAME: '', PARKING_QUEUE_URL: '', APPROVAL_TIMEOUT_SECONDS: '' });
    expect(config.tableName).toBe('dlq-redrive');
    expect(config.parkingQueueUrl).toBeUndefined();
    expect(config.approvalTimeoutSeconds).toBeUndefined();
  });

  it('refuses bad values with Redrive.InvalidConfiguration naming every bad variable at once', () => {
    const error = (() => {
      try {
        readConfig({
          TABLE_NAME: 'x',
          PARKING_QUEUE_URL: 'parking',
          APPROVAL_TIMEOUT_SECONDS: 'an hour',
          REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS: '50000',
          TRIAGE_PAGE_BUDGET: '200000',
          ALARM_QUEUE_MAP: '{not json',
          STATE_MACHINE_ARN: 'redrive',
        });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigurationError);
    const e = error as ConfigurationError;
    expect(e.name).toBe('Redrive.InvalidConfiguration');
    expect(e.code).toBe('INVALID_CONFIG');
    expect(e.details.map((d) => d.split(':')[0]).sort()).toEqual([
      'ALARM_QUEUE_MAP',
      'APPROVAL_TIMEOUT_SECONDS',
      'PARKING_QUEUE_URL',
      'REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS',
      'STATE_MACHINE_ARN',
      'TABLE_NAME',
      'TRIAGE_PAGE_BUDGET',
    ]);
    expect(e.message).toContain('ALARM_QUEUE_MAP: must be JSON');
  });
});

describe('pipelineConfig and the reset hook', () => {
  const before = process.env.TABLE_NAME;
  afterEach(() => {
    if (before === undefined) delete process.env.TABLE_NAME;
    else process.env.TABLE_NAME = before;
    resetClients();
  });

  it('reads the environment once, and again after resetClients()', () => {
    process.env.TABLE_NAME = 'first-table';
    resetClients();
    const client = sqsClient();
    expect(pipelineConfig().tableName).toBe('first-table');
    process.env.TABLE_NAME = 'second-table';
    expect(pipelineConfig().tableName).toBe('first-table');
    expect(sqsClient()).toBe(client);
    resetClients();
    expect(pipelineConfig().tableName).toBe('second-table');
    expect(sqsClient()).not.toBe(client);
  });

  // Test files share a worker's modules (vitest.config.ts): a file's Slack stand-in, or no Slack at
  // all, must not stay in the next file's handlers (slack-cancel failed so beside a second npm test).
  it('resetClients() also forgets what was built from the configuration: Slack credentials, notifier, ramp progress reporter', async () => {
    const slackVars = ['SLACK_BOT_TOKEN', 'SLACK_SIGNING_SECRET', 'SLACK_SECRET_ARN'] as const;
    const saved = slackVars.map((name) => [name, process.env[name]] as const);
    try {
      for (const name of slackVars) delete process.env[name];
      resetClients();
      expect(await sharedRampProgress()).toBeNull();
      const logNotifier = sharedNotifier();
      process.env.SLACK_BOT_TOKEN = 'xoxb-first';
      process.env.SLACK_SIGNING_SECRET = 'signing-secret-not-real';
      expect(await sharedRampProgress()).toBeNull();
      expect(sharedNotifier()).toBe(logNotifier);
      resetClients();
      expect(await sharedRampProgress()).not.toBeNull();
      expect(sharedNotifier()).not.toBe(logNotifier);
      expect((await loadSlackSecrets(pipelineConfig().slack)).botToken).toBe('xoxb-first');
      process.env.SLACK_BOT_TOKEN = 'xoxb-second';
      resetClients();
      expect((await loadSlackSecrets(pipelineConfig().slack)).botToken).toBe('xoxb-second');
    } finally {
      for (const [name, value] of saved) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

describe('wiring rules', () => {
  // The consumer middleware lives in packages/consumer-idempotency: every file here is the pipeline's.
  const code = new Map(functionSources().map((f) => [f.path, withoutComments(f.text)]));

  it('only platform/config.ts reads process.env', () => {
    const readers = [...code].filter(([, text]) => /process\.env/.test(text)).map(([path]) => path);
    expect(readers).toEqual(['shared/platform/config.ts']);
  });

  it('only platform/clients.ts (and scoped-clients.ts, for other accounts and Regions) constructs an AWS SDK client', () => {
    const awsClient = /new [A-Za-z]+Client\(|DynamoDBDocumentClient\.from\(/;
    const builders = [...code].filter(([, text]) => awsClient.test(text)).map(([path]) => path);
    expect(builders.sort()).toEqual(['shared/platform/clients.ts', 'shared/platform/scoped-clients.ts']);
  });
});
