/**
 * Local KMS stand-in: keys, aliases, key policies and key states, on the wire protocol the SDK v3
 * client (3.1164.0) speaks: awsJson 1.1, target `TrentService`.
 *
 * Operations: CreateKey, CreateAlias, DescribeKey, GetKeyPolicy, PutKeyPolicy, EnableKey,
 * DisableKey, ScheduleKeyDeletion, GenerateDataKey, Decrypt. `KeyId` may be a key id, key ARN,
 * alias name or alias ARN, as in KMS. `alias/aws/sqs` (the AWS managed key SQS uses by default)
 * exists from the start with `KeyManager: 'AWS'`.
 *
 * What is not KMS: the "ciphertext" of GenerateDataKey is the key id and the plaintext in the
 * clear (this stand-in proves who may use a key, not cryptography), and GenerateDataKey /
 * Decrypt do not evaluate the key policy: {@link KmsStandin.keyPolicy} exposes it so the IAM
 * stand-in's policy simulation can.
 *
 * @see https://docs.aws.amazon.com/kms/latest/APIReference/API_DescribeKey.html
 * @see https://docs.aws.amazon.com/kms/latest/developerguide/key-state.html
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  awsJsonProtocol,
  epochSeconds,
  requireString,
  type Standin,
  StandinError,
  startStandin,
} from './server.js';

type KeyState = 'Enabled' | 'Disabled' | 'PendingDeletion';

interface StoredKey {
  keyId: string;
  arn: string;
  manager: 'CUSTOMER' | 'AWS';
  state: KeyState;
  policy: string;
  description: string;
  created: Date;
  deletionDate?: Date;
}

/** Options of {@link startKmsStandin}. */
export interface KmsStandinOptions {
  /** @default 'us-east-1' */
  region?: string;
  /** @default '123456789012' */
  accountId?: string;
}

/** The running stand-in, with direct access for tests and the IAM stand-in. */
export interface KmsStandin extends Standin {
  /** The key policy (JSON text) of a key by id, ARN or alias; undefined when there is no such key. */
  keyPolicy(keyId: string): string | undefined;
  /** The key ARN a key id, ARN or alias resolves to; undefined when there is no such key. */
  keyArn(keyId: string): string | undefined;
  /** Makes every use of this key by this caller (access key id; '*' = anyone) an access denial. */
  denyUse(keyId: string, accessKeyId?: string): void;
  /**
   * Why SQS could not use this key for a caller, as SQS names it (`KmsNotFound`, `KmsDisabled`,
   * `KmsInvalidState`, `KmsAccessDenied`), or undefined when it can.
   */
  useError(
    keyId: string,
    accessKeyId: string,
  ): { sqsError: string; queryCode: string; message: string } | undefined;
}

/** KMS's default key policy: the account's root may do everything, so IAM policies decide. */
export function defaultKeyPolicy(accountId: string): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Id: 'key-default-1',
    Statement: [
      {
        Sid: 'Enable IAM User Permissions',
        Effect: 'Allow',
        Principal: { AWS: `arn:aws:iam::${accountId}:root` },
        Action: 'kms:*',
        Resource: '*',
      },
    ],
  });
}

/** Starts the KMS stand-in; point the SDK at it with `AWS_ENDPOINT_URL_KMS`. */
export async function startKmsStandin(options: KmsStandinOptions = {}): Promise<KmsStandin> {
  const region = options.region ?? 'us-east-1';
  const account = options.accountId ?? '123456789012';
  const keys = new Map<string, StoredKey>();
  const aliases = new Map<string, string>();
  const arnPrefix = `arn:aws:kms:${region}:${account}:`;

  const create = (manager: StoredKey['manager'], policy: string | undefined, description: string) => {
    const keyId = randomUUID();
    const key: StoredKey = {
      keyId,
      arn: `${arnPrefix}key/${keyId}`,
      manager,
      state: 'Enabled',
      policy: policy ?? defaultKeyPolicy(account),
      description,
      created: new Date(),
    };
    keys.set(keyId, key);
    return key;
  };
  aliases.set('alias/aws/sqs', create('AWS', undefined, 'Default key that protects my SQS messages').keyId);

  const find = (keyId: string): StoredKey | undefined => {
    const bare = keyId.startsWith(arnPrefix) ? keyId.slice(arnPrefix.length) : keyId;
    const id = bare.startsWith('alias/') ? aliases.get(bare) : bare.replace(/^key\//, '');
    return id === undefined ? undefined : keys.get(id);
  };
  const resolve = (input: Record<string, unknown>): StoredKey => {
    const keyId = requireString(input, 'KeyId');
    const key = find(keyId);
    if (!key) throw new StandinError('NotFoundException', `Key '${keyId}' does not exist`);
    return key;
  };
  const usable = (key: StoredKey): StoredKey => {
    if (key.state === 'Disabled') throw new StandinError('DisabledException', `${key.arn} is disabled.`);
    if (key.state === 'PendingDeletion')
      throw new StandinError('KMSInvalidStateException', `${key.arn} is pending deletion.`);
    return key;
  };
  const metadata = (key: StoredKey) => ({
    AWSAccountId: account,
    KeyId: key.keyId,
    Arn: key.arn,
    CreationDate: epochSeconds(key.created),
    Enabled: key.state === 'Enabled',
    Description: key.description,
    KeyUsage: 'ENCRYPT_DECRYPT',
    KeyState: key.state,
    Origin: 'AWS_KMS',
    KeyManager: key.manager,
    KeySpec: 'SYMMETRIC_DEFAULT',
    CustomerMasterKeySpec: 'SYMMETRIC_DEFAULT',
    EncryptionAlgorithms: ['SYMMETRIC_DEFAULT'],
    MultiRegion: false,
    ...(key.deletionDate ? { DeletionDate: epochSeconds(key.deletionDate) } : {}),
  });

  const standin = await startStandin({
    service: 'KMS',
    protocol: awsJsonProtocol({
      version: '1.1',
      targetPrefix: 'TrentService',
      namespace: 'com.amazonaws.kms',
    }),
    operations: {
      CreateKey(input) {
        const key = create(
          'CUSTOMER',
          typeof input.Policy === 'string' ? input.Policy : undefined,
          typeof input.Description === 'string' ? input.Description : '',
        );
        return { KeyMetadata: metadata(key) };
      },
      CreateAlias(input) {
        const name = requireString(input, 'AliasName');
        if (!name.startsWith('alias/') || name.startsWith('alias/aws/'))
          throw new StandinError(
            'ValidationException',
            `alias ${name} must start with alias/ and not alias/aws/`,
          );
        if (aliases.has(name))
          throw new StandinError('AlreadyExistsException', `An alias with the name ${name} already exists`);
        const key = find(requireString(input, 'TargetKeyId'));
        if (!key) throw new StandinError('NotFoundException', 'target key does not exist');
        aliases.set(name, key.keyId);
        return {};
      },
      DescribeKey: (input) => ({ KeyMetadata: metadata(resolve(input)) }),
      GetKeyPolicy: (input) => ({ Policy: resolve(input).policy, PolicyName: 'default' }),
      PutKeyPolicy(input) {
        const key = resolve(input);
        const policy = requireString(input, 'Policy');
        try {
          JSON.parse(policy);
        } catch {
          throw new StandinError('MalformedPolicyDocumentException', 'policy is not JSON');
        }
        key.policy = policy;
        return {};
      },
      EnableKey(input) {
        const key = resolve(input);
        if (key.state === 'PendingDeletion')
          throw new StandinError('KMSInvalidStateException', `${key.arn} is pending deletion.`);
        key.state = 'Enabled';
        return {};
      },
      DisableKey(input) {
        const key = resolve(input);
        if (key.state === 'PendingDeletion')
          throw new StandinError('KMSInvalidStateException', `${key.arn} is pending deletion.`);
        key.state = 'Disabled';
        return {};
      },
      ScheduleKeyDeletion(input) {
        const key = resolve(input);
        const days = Number(input.PendingWindowInDays ?? 30);
        key.state = 'PendingDeletion';
        key.deletionDate = new Date(Date.now() + days * 86_400_000);
        return {
          KeyId: key.arn,
          KeyState: key.state,
          DeletionDate: epochSeconds(key.deletionDate),
          PendingWindowInDays: days,
        };
      },
      GenerateDataKey(input) {
        const key = usable(resolve(input));
        const plaintext = randomBytes(32);
        const blob = Buffer.from(JSON.stringify({ k: key.keyId, p: plaintext.toString('base64') }));
        return {
          KeyId: key.arn,
          Plaintext: plaintext.toString('base64'),
          CiphertextBlob: blob.toString('base64'),
        };
      },
      Decrypt(input) {
        let parsed: { k?: string; p?: string };
        try {
          parsed = JSON.parse(Buffer.from(requireString(input, 'CiphertextBlob'), 'base64').toString('utf8'));
        } catch {
          throw new StandinError('InvalidCiphertextException', 'ciphertext was not made by this stand-in');
        }
        const key = parsed.k ? keys.get(parsed.k) : undefined;
        if (!key || !parsed.p)
          throw new StandinError('InvalidCiphertextException', 'ciphertext names no key');
        usable(key);
        return { KeyId: key.arn, Plaintext: parsed.p, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
      },
    },
  });
  const denied = new Set<string>();
  return {
    ...standin,
    keyPolicy: (id) => find(id)?.policy,
    keyArn: (id) => find(id)?.arn,
    denyUse(keyId, accessKeyId = '*') {
      const key = find(keyId);
      if (!key) throw new Error(`no key ${keyId}`);
      denied.add(`${key.keyId} ${accessKeyId}`);
    },
    useError(keyId, accessKeyId) {
      const key = find(keyId);
      if (!key)
        return {
          sqsError: 'KmsNotFound',
          queryCode: 'KMS.NotFoundException',
          message: `Key '${keyId}' does not exist`,
        };
      if (key.state === 'Disabled')
        return {
          sqsError: 'KmsDisabled',
          queryCode: 'KMS.DisabledException',
          message: `${key.arn} is disabled.`,
        };
      if (key.state === 'PendingDeletion')
        return {
          sqsError: 'KmsInvalidState',
          queryCode: 'KMS.InvalidStateException',
          message: `${key.arn} is pending deletion.`,
        };
      if (denied.has(`${key.keyId} *`) || denied.has(`${key.keyId} ${accessKeyId}`))
        return {
          sqsError: 'KmsAccessDenied',
          queryCode: 'KMS.AccessDeniedException',
          message: `The ciphertext refers to a customer master key that does not exist, does not exist in this region, or you are not allowed to access. (Service: AWSKMS; Status Code: 400; Error Code: AccessDeniedException)`,
        };
      return undefined;
    },
  };
}
