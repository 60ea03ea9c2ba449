import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CreateRoleCommand,
  IAMClient,
  PutRolePolicyCommand,
  SimulatePrincipalPolicyCommand,
} from '@aws-sdk/client-iam';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicySimulator } from '../../functions/preflight/policy-simulator.js';
import { type IamStandin, startIamStandin } from '../../local/aws-standins/iam.js';
import { StandinError } from '../../local/aws-standins/server.js';

const credentials = async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' });
const KEY = 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const VIA_SQS = 'sqs.us-east-1.amazonaws.com';
/** The simulator over an IAM client of `endpoint`, one attempt per call (no SDK retry in the way). */
const simulatorAt = (endpoint: string) =>
  createPolicySimulator(
    async () => new IAMClient({ endpoint, region: 'us-east-1', credentials, maxAttempts: 1 }),
  );

describe('createPolicySimulator against the IAM stand-in', () => {
  let iam: IamStandin;
  let client: IAMClient;
  let roleArn: string;
  beforeAll(async () => {
    iam = await startIamStandin();
    client = new IAMClient({ endpoint: iam.url, region: 'us-east-1', credentials });
    const role = await client.send(
      new CreateRoleCommand({ RoleName: 'pipeline-park', AssumeRolePolicyDocument: '{}' }),
    );
    roleArn = role.Role?.Arn as string;
    await client.send(
      new PutRolePolicyCommand({
        RoleName: 'pipeline-park',
        PolicyName: 'kms',
        PolicyDocument: JSON.stringify({
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Action: 'kms:Decrypt', Resource: '*' },
            {
              Effect: 'Allow',
              Action: 'kms:GenerateDataKey',
              Resource: '*',
              Condition: { StringEquals: { 'kms:ViaService': VIA_SQS, 'kms:CallerAccount': '123456789012' } },
            },
          ],
        }),
      }),
    );
  });
  afterAll(() => iam.close());

  it('gives the decisions the SDK client gets for the same simulation, missing context keys included', async () => {
    const actions = ['kms:Decrypt', 'kms:GenerateDataKey', 'kms:Encrypt'];
    const context = new Map([['kms:ViaService', [VIA_SQS]]]);
    const simulator = simulatorAt(iam.url);

    const ours = await simulator.simulate(roleArn, actions, KEY, context);
    const sdk = await client.send(
      new SimulatePrincipalPolicyCommand({
        PolicySourceArn: roleArn,
        ActionNames: actions,
        ResourceArns: [KEY],
        ContextEntries: [
          { ContextKeyName: 'kms:ViaService', ContextKeyValues: [VIA_SQS], ContextKeyType: 'string' },
        ],
      }),
    );

    expect(ours).toEqual([
      { action: 'kms:Decrypt', decision: 'allowed', missingContext: [] },
      { action: 'kms:GenerateDataKey', decision: 'implicitDeny', missingContext: ['kms:CallerAccount'] },
      { action: 'kms:Encrypt', decision: 'implicitDeny', missingContext: [] },
    ]);
    expect(ours).toEqual(
      sdk.EvaluationResults?.map((r) => ({
        action: r.EvalActionName,
        decision: r.EvalDecision,
        missingContext: r.MissingContextValues ?? [],
      })),
    );
  });

  it('maps AccessDenied to Redrive.AccessDenied, throttling to Redrive.Transient, and names any other IAM error code', async () => {
    const simulator = simulatorAt(iam.url);
    const simulate = () => simulator.simulate(roleArn, ['kms:Decrypt'], KEY, new Map());
    const failOnce = (error: StandinError) =>
      iam.fail({ operation: 'SimulatePrincipalPolicy', error, times: 1 });

    failOnce(new StandinError('AccessDenied', 'not authorized to perform iam:SimulatePrincipalPolicy', 403));
    await expect(simulate()).rejects.toMatchObject({
      name: 'Redrive.AccessDenied',
      message: `access denied: iam:SimulatePrincipalPolicy on ${roleArn}`,
    });
    failOnce(new StandinError('Throttling', 'Rate exceeded', 400));
    await expect(simulate()).rejects.toMatchObject({
      name: 'Redrive.Transient',
      message: `iam:SimulatePrincipalPolicy ${roleArn}: Throttling: Rate exceeded`,
    });
    await expect(
      simulator.simulate(roleArn.replace('pipeline-park', 'gone'), ['kms:Decrypt'], KEY, new Map()),
    ).rejects.toMatchObject({ name: 'RedriveError', message: expect.stringContaining('NoSuchEntity') });
  });

  it('throws Redrive.Transient naming the call when IAM cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const simulator = simulatorAt(`http://127.0.0.1:${port}`);

    await expect(simulator.simulate(roleArn, ['kms:Decrypt'], KEY, new Map())).rejects.toMatchObject({
      name: 'Redrive.Transient',
      message: expect.stringContaining(`iam:SimulatePrincipalPolicy ${roleArn}: `),
    });
  });
});

describe('createPolicySimulator paging and signing', () => {
  const bodies: string[] = [];
  const authorizations: string[] = [];
  // IAM pages a long answer with IsTruncated and Marker; one member parses as an object, not a list.
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      if (new URLSearchParams(body).get('PolicySourceArn')?.endsWith('/behind-proxy')) {
        res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body>Bad Gateway</body>');
        return;
      }
      bodies.push(body);
      authorizations.push(req.headers.authorization ?? '');
      const second = new URLSearchParams(body).get('Marker') === 'page-2';
      const result = second
        ? '<IsTruncated>false</IsTruncated><EvaluationResults><member><EvalActionName>kms:GenerateDataKey</EvalActionName><EvalDecision>explicitDeny</EvalDecision><MissingContextValues><member>kms:ViaService</member></MissingContextValues></member></EvaluationResults>'
        : '<IsTruncated>true</IsTruncated><Marker>page-2</Marker><EvaluationResults><member><EvalActionName>kms:Decrypt</EvalActionName><EvalDecision>allowed</EvalDecision><MissingContextValues/></member></EvaluationResults>';
      res
        .writeHead(200, { 'content-type': 'text/xml' })
        .end(
          `<SimulatePrincipalPolicyResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><SimulatePrincipalPolicyResult>${result}</SimulatePrincipalPolicyResult></SimulatePrincipalPolicyResponse>`,
        );
    });
  });
  let endpoint: string;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('follows Marker until IsTruncated is false, signing each page for iam in us-east-1', async () => {
    const simulator = simulatorAt(endpoint);
    const role = 'arn:aws:iam::123456789012:role/pipeline-move-task';

    const decisions = await simulator.simulate(role, ['kms:Decrypt', 'kms:GenerateDataKey'], KEY, new Map());

    expect(decisions).toEqual([
      { action: 'kms:Decrypt', decision: 'allowed', missingContext: [] },
      { action: 'kms:GenerateDataKey', decision: 'explicitDeny', missingContext: ['kms:ViaService'] },
    ]);
    expect(bodies.map((b) => new URLSearchParams(b).get('Marker'))).toEqual([null, 'page-2']);
    for (const authorization of authorizations)
      expect(authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/iam\/aws4_request, SignedHeaders=[^ ]*host[^ ]*, Signature=[0-9a-f]{64}$/,
      );
  });

  it('reads a 5xx whose body is not IAM XML (a proxy page) as Redrive.Transient', async () => {
    const simulator = simulatorAt(endpoint);
    const role = 'arn:aws:iam::123456789012:role/behind-proxy';

    await expect(simulator.simulate(role, ['kms:Decrypt'], KEY, new Map())).rejects.toMatchObject({
      name: 'Redrive.Transient',
      message: expect.stringContaining(`iam:SimulatePrincipalPolicy ${role}: `),
    });
  });
});
