/**
 * Local STS stand-in: AssumeRole and GetCallerIdentity on the wire protocol the SDK v3 client
 * (3.1164.0) speaks, awsQuery.
 *
 * A role can be assumed only after {@link StsStandin.allowRole} (optionally requiring an external
 * id); anything else is `AccessDenied`, as when a role's trust policy does not name the caller.
 * Each assumed-role session gets its own access key id, so another stand-in's call record (its
 * `accessKeyId`) tells which role made a call: {@link StsStandin.roleOf} maps it back.
 *
 * Not STS: credentials are not verified by the other stand-ins, no session policies or tags.
 *
 * @see https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRole.html
 */
import { createHash, randomBytes } from 'node:crypto';
import { awsQueryProtocol, requireString, type Standin, StandinError, startStandin } from './server.js';

/** The running stand-in. */
export interface StsStandin extends Standin {
  /** Lets the pipeline assume `roleArn` (with `externalId`, when the trust policy requires one). */
  allowRole(roleArn: string, options?: { externalId?: string }): void;
  /** The role an assumed-role access key id belongs to, or undefined for any other key. */
  roleOf(accessKeyId: string): string | undefined;
}

/** Starts the STS stand-in. */
export async function startStsStandin(options: { accountId: string }): Promise<StsStandin> {
  const allowed = new Map<string, { externalId?: string }>();
  const sessions = new Map<string, string>();
  const standin = await startStandin({
    service: 'STS',
    protocol: awsQueryProtocol({ xmlns: 'https://sts.amazonaws.com/doc/2011-06-15/' }),
    operations: {
      AssumeRole(input) {
        const roleArn = requireString(input, 'RoleArn');
        const sessionName = requireString(input, 'RoleSessionName');
        const rule = allowed.get(roleArn);
        if (!rule || (rule.externalId !== undefined && rule.externalId !== input.ExternalId))
          throw new StandinError(
            'AccessDenied',
            `User: arn:aws:iam::${options.accountId}:role/local is not authorized to perform: sts:AssumeRole on resource: ${roleArn}`,
            403,
          );
        const accessKeyId = `ASIA${createHash('sha256').update(`${roleArn}#${sessions.size}`).digest('hex').slice(0, 16).toUpperCase()}`;
        sessions.set(accessKeyId, roleArn);
        const seconds = Number(input.DurationSeconds ?? 3600);
        const [, , , , account, resource = ''] = roleArn.split(':');
        return {
          Credentials: {
            AccessKeyId: accessKeyId,
            SecretAccessKey: randomBytes(20).toString('hex'),
            SessionToken: randomBytes(32).toString('base64'),
            Expiration: new Date(Date.now() + seconds * 1000),
          },
          AssumedRoleUser: {
            AssumedRoleId: `AROA${accessKeyId.slice(4)}:${sessionName}`,
            Arn: `arn:aws:sts::${account}:assumed-role/${resource.replace(/^role\//, '')}/${sessionName}`,
          },
        };
      },
      GetCallerIdentity(_input, ctx) {
        const role = sessions.get(ctx.accessKeyId);
        return role
          ? { Account: role.split(':')[4], Arn: role, UserId: ctx.accessKeyId }
          : {
              Account: options.accountId,
              Arn: `arn:aws:iam::${options.accountId}:user/local`,
              UserId: ctx.accessKeyId,
            };
      },
    },
  });
  return Object.assign(standin, {
    allowRole(roleArn: string, rule: { externalId?: string } = {}) {
      allowed.set(roleArn, rule);
    },
    roleOf: (accessKeyId: string) => sessions.get(accessKeyId),
  });
}
