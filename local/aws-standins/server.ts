/**
 * The skeleton every small local AWS stand-in is built on (docs/local-run.md, "Local AWS
 * stand-ins"): an HTTP server on a free loopback port that decodes a request with its service's
 * wire protocol, calls the operation's handler, and encodes the result or error the way the real
 * service does, so the real AWS SDK v3 client (pointed at it by `AWS_ENDPOINT_URL_<SERVICE>`)
 * parses it like a response from AWS. Signatures are not checked; the access key id of the
 * request is passed to the handler as the caller, so a stand-in can model who may do what.
 *
 * A stand-in is `{ protocol, operations }`: the protocol (awsJson 1.0 / 1.1, awsQuery; add
 * restJson beside them for Lambda) and one handler per operation name. Unknown operations
 * answer the service's `UnknownOperationException`, so a missing handler is a clear failure, not
 * a hang.
 *
 * @see https://smithy.io/2.0/aws/protocols/aws-json-1_0-protocol.html
 * @see https://smithy.io/2.0/aws/protocols/aws-json-1_1-protocol.html
 * @see https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An error a handler throws to answer like the service: `code` is the service's error code. */
export class StandinError extends Error {
  public override readonly name = 'StandinError';
  /**
   * @param code - the error shape name (`ResourceNotFound`, `NotFoundException`...).
   * @param status - HTTP status. @default 400
   * @param queryCode - for awsQuery-compatible services, the legacy code sent in
   *   `x-amzn-query-error` (e.g. SQS's `KMS.AccessDeniedException` for `KmsAccessDenied`).
   */
  public constructor(
    public readonly code: string,
    message: string,
    public readonly status = 400,
    public readonly queryCode?: string,
  ) {
    super(message);
  }
}

/** What a handler learns about the request besides its input. */
export interface CallContext {
  /** The access key id of the SigV4 `Authorization` header ('' when unsigned): who is calling. */
  readonly accessKeyId: string;
  /** The region of the credential scope ('' when unsigned). */
  readonly region: string;
}

/** One operation: input (the decoded request) in, output (to encode) out. */
export type OperationHandler = (input: Record<string, unknown>, ctx: CallContext) => unknown;

/** A decoded request. */
export interface DecodedRequest {
  operation: string;
  input: Record<string, unknown>;
}

/** An encoded HTTP response. */
export interface EncodedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A service wire protocol: how requests are read and responses written. */
export interface WireProtocol {
  /** @throws StandinError for a request that is not this protocol. */
  decode(request: IncomingMessage, body: Buffer): DecodedRequest;
  encodeResult(operation: string, output: unknown): EncodedResponse;
  encodeError(error: StandinError): EncodedResponse;
}

/**
 * The awsJson protocol (1.0 for CloudWatch, SQS, DynamoDB, SFN; 1.1 for KMS, EventBridge):
 * `POST /`, `X-Amz-Target: <targetPrefix>.<Operation>`, a JSON body; errors are
 * `{ "__type": "<namespace>#<Code>", "message" }`. Timestamps travel as epoch seconds.
 *
 * @param options.queryCompatible - the service was awsQuery before (CloudWatch, SQS): errors also
 *   carry `x-amzn-query-error: <code>;Sender`, which the SDK reads as the error's `Code`.
 */
export function awsJsonProtocol(options: {
  version: '1.0' | '1.1';
  targetPrefix: string;
  namespace: string;
  queryCompatible?: boolean;
}): WireProtocol {
  const contentType = `application/x-amz-json-${options.version}`;
  return {
    decode(request, body) {
      const target = String(request.headers['x-amz-target'] ?? '');
      const [prefix, operation] = target.split('.');
      if (request.method !== 'POST' || prefix !== options.targetPrefix || !operation)
        throw new StandinError(
          'UnknownOperationException',
          `expected POST with X-Amz-Target ${options.targetPrefix}.<Operation>, got ${request.method} ${target || '(none)'}`,
        );
      let input: unknown = {};
      const text = body.toString('utf8');
      if (text.trim() !== '') {
        try {
          input = JSON.parse(text);
        } catch {
          throw new StandinError('SerializationException', 'request body is not JSON');
        }
      }
      if (input === null || typeof input !== 'object' || Array.isArray(input))
        throw new StandinError('SerializationException', 'request body must be a JSON object');
      return { operation, input: input as Record<string, unknown> };
    },
    encodeResult(_operation, output) {
      return { status: 200, headers: { 'content-type': contentType }, body: JSON.stringify(output ?? {}) };
    },
    encodeError(error) {
      const headers: Record<string, string> = { 'content-type': contentType };
      if (options.queryCompatible) headers['x-amzn-query-error'] = `${error.queryCode ?? error.code};Sender`;
      return {
        status: error.status,
        headers,
        body: JSON.stringify({ __type: `${options.namespace}#${error.code}`, message: error.message }),
      };
    },
  };
}

/**
 * Decodes an awsQuery form body into the operation's input: `A.member.1=x&A.member.2=y` is the
 * list `A: [x, y]`, `E.member.1.Name=n` a list of structures, anything else a string member.
 */
export function decodeQueryForm(text: string): { action: string; input: Record<string, unknown> } {
  const input: Record<string, unknown> = {};
  let action = '';
  for (const [name, value] of new URLSearchParams(text)) {
    if (name === 'Action') action = value;
    if (name === 'Action' || name === 'Version') continue;
    const parts = name.split('.');
    let node: Record<string, unknown> | unknown[] = input;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as string;
      const last = i === parts.length - 1;
      if (part === 'member' && Array.isArray(node)) continue;
      const key: string | number = Array.isArray(node) ? Number(part) - 1 : part;
      const next = parts[i + 1];
      const container = node as Record<string | number, unknown>;
      if (last) container[key] = value;
      else {
        container[key] ??= next === 'member' ? [] : {};
        node = container[key] as Record<string, unknown> | unknown[];
      }
    }
  }
  return { action, input: foldEntries(input) as Record<string, unknown> };
}

/**
 * awsQuery maps (`Attributes.entry.N.key/value`, SNS's `MessageAttributes.entry.N.Name/Value`)
 * become plain objects: `{ entry: { 1: { Name: 'a', Value: v } } }` is `{ a: v }`.
 */
function foldEntries(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(foldEntries);
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 1 && keys[0] === 'entry' && typeof record.entry === 'object' && record.entry !== null) {
    const map: Record<string, unknown> = {};
    const entries = Object.entries(record.entry as Record<string, Record<string, unknown>>).sort(
      ([a], [b]) => Number(a) - Number(b),
    );
    for (const [, entry] of entries)
      map[String(entry.Name ?? entry.key)] = foldEntries(entry.Value ?? entry.value);
    return map;
  }
  return Object.fromEntries(keys.map((k) => [k, foldEntries(record[k])]));
}

const escapeXml = (text: string) =>
  text.replace(
    /[<>&'"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c] ?? c,
  );

/** An awsQuery result value as XML: lists as `<member>` elements, dates as ISO 8601. */
export function toQueryXml(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map((item) => `<member>${toQueryXml(item)}</member>`).join('');
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object')
    return Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `<${k}>${toQueryXml(v)}</${k}>`)
      .join('');
  return escapeXml(String(value));
}

/**
 * The awsQuery protocol (IAM, STS, SNS): `POST /` with a form-encoded body (`Action=<Operation>&
 * Version=<date>&...`, lists as `Name.member.N`), results as
 * `<OperationResponse><OperationResult>...</OperationResult></OperationResponse>` XML and errors as
 * `<ErrorResponse><Error><Type>Sender</Type><Code>...</Code>...`, from which the SDK raises the
 * error class of that code.
 *
 * @param options.xmlns - the service's namespace (`https://iam.amazonaws.com/doc/2010-05-08/`).
 * @see https://smithy.io/2.0/aws/protocols/aws-query-protocol.html
 */
export function awsQueryProtocol(options: { xmlns: string }): WireProtocol {
  const requestId = () => `<RequestId>${crypto.randomUUID()}</RequestId>`;
  return {
    decode(request, body) {
      const { action, input } = decodeQueryForm(body.toString('utf8'));
      if (request.method !== 'POST' || !action)
        throw new StandinError(
          'InvalidAction',
          `expected POST with a form body naming Action, got ${request.method}`,
        );
      return { operation: action, input };
    },
    encodeResult(operation, output) {
      return {
        status: 200,
        headers: { 'content-type': 'text/xml' },
        body: `<${operation}Response xmlns="${options.xmlns}"><${operation}Result>${toQueryXml(output)}</${operation}Result><ResponseMetadata>${requestId()}</ResponseMetadata></${operation}Response>`,
      };
    },
    encodeError(error) {
      return {
        status: error.status,
        headers: { 'content-type': 'text/xml' },
        body: `<ErrorResponse xmlns="${options.xmlns}"><Error><Type>${error.status >= 500 ? 'Receiver' : 'Sender'}</Type><Code>${escapeXml(error.queryCode ?? error.code)}</Code><Message>${escapeXml(error.message)}</Message></Error>${requestId()}</ErrorResponse>`,
      };
    },
  };
}

/** One route of a {@link restJsonProtocol}: method and path pattern to an operation. */
export interface RestRoute {
  method: string;
  /** Matched against the URL path (without the query string); named groups become input members. */
  path: RegExp;
  operation: string;
  /** Header (lower case) -> input member. */
  headers?: Record<string, string>;
  /** The input member that takes the raw body (`Payload`), else the body is parsed as JSON. */
  payloadMember?: string;
}

/** What a restJson handler may return beside its output: a status and response headers. */
export interface RestOutput {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  /** The raw response body (a payload member), else `body` is JSON. */
  readonly payload?: Uint8Array | string;
  readonly body?: unknown;
}

/**
 * The restJson1 protocol (Lambda at SDK 3.1164.0): the operation is chosen by method and path,
 * input members come from the path, headers and body; errors are JSON with the error code in
 * `x-amzn-ErrorType`. Handlers return a {@link RestOutput}.
 * @see https://smithy.io/2.0/aws/protocols/aws-restjson1-protocol.html
 */
export function restJsonProtocol(routes: readonly RestRoute[]): WireProtocol {
  return {
    decode(request, body) {
      const url = new URL(request.url ?? '/', 'http://localhost');
      for (const route of routes) {
        const match =
          request.method === route.method ? route.path.exec(decodeURIComponent(url.pathname)) : null;
        if (!match) continue;
        const input: Record<string, unknown> = { ...(match.groups ?? {}) };
        for (const [header, member] of Object.entries(route.headers ?? {})) {
          const value = request.headers[header];
          if (typeof value === 'string') input[member] = value;
        }
        if (route.payloadMember) input[route.payloadMember] = new Uint8Array(body);
        else if (body.byteLength > 0) Object.assign(input, JSON.parse(body.toString('utf8')) as object);
        return { operation: route.operation, input };
      }
      throw new StandinError(
        'UnknownOperationException',
        `no route for ${request.method} ${url.pathname}`,
        404,
      );
    },
    encodeResult(_operation, output) {
      const out = (output ?? {}) as RestOutput;
      const raw = out.payload;
      return {
        status: out.status ?? 200,
        headers: {
          'content-type': raw === undefined ? 'application/json' : 'application/octet-stream',
          ...out.headers,
        },
        body: raw === undefined ? JSON.stringify(out.body ?? {}) : Buffer.from(raw).toString('utf8'),
      };
    },
    encodeError(error) {
      return {
        status: error.status,
        headers: { 'content-type': 'application/json', 'x-amzn-errortype': error.code },
        body: JSON.stringify({ Type: error.status >= 500 ? 'Service' : 'User', message: error.message }),
      };
    },
  };
}

/** One recorded call (tests assert on these: "no DescribeAlarms call", "GetKeyPolicy on key X"). */
export interface RecordedCall {
  operation: string;
  input: Record<string, unknown>;
  accessKeyId: string;
  /** The error code answered, when the call failed. */
  error?: string;
}

/** A fault a test injects: the next matching calls fail with this error instead of running. */
export interface InjectedFault {
  /** Operation name, or '*' for every operation. */
  operation: string;
  error: StandinError;
  /** How many calls fail; `Infinity` until cleared. @default Infinity */
  times?: number;
}

/** A running stand-in. */
export interface Standin {
  readonly service: string;
  /** e.g. `http://127.0.0.1:40123`: the value of `AWS_ENDPOINT_URL_<SERVICE>`. */
  readonly url: string;
  /** Every call so far, oldest first. */
  readonly calls: RecordedCall[];
  /** Makes matching calls fail (AccessDenied, throttling...) until `times` is used up or cleared. */
  fail(fault: InjectedFault): void;
  /** Removes every injected fault. */
  clearFaults(): void;
  /** Stops the server and drops its connections. Safe to call twice. */
  close(): Promise<void>;
}

/** Definition of a stand-in service. */
export interface StandinDefinition {
  /** The SDK's service id, for messages (`CloudWatch`, `KMS`). */
  service: string;
  protocol: WireProtocol;
  operations: Readonly<Record<string, OperationHandler>>;
}

/** Reads the caller from a SigV4 `Authorization` header (`Credential=<key>/<date>/<region>/...`). */
export function callerOf(request: IncomingMessage): CallContext {
  const auth = String(request.headers.authorization ?? '');
  const match = /Credential=([^/,\s]+)\/\d+\/([^/]+)\//.exec(auth);
  return { accessKeyId: match?.[1] ?? '', region: match?.[2] ?? '' };
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function send(response: ServerResponse, encoded: EncodedResponse): void {
  response.writeHead(encoded.status, {
    ...encoded.headers,
    'content-length': String(Buffer.byteLength(encoded.body)),
    'x-amzn-requestid': crypto.randomUUID(),
  });
  response.end(encoded.body);
}

/** What {@link hostStandin} gives the request listener: the call record and the fault queue. */
export interface StandinTools {
  readonly calls: RecordedCall[];
  /** The injected fault for this operation, counted as used; undefined when none applies. */
  takeFault(operation: string): StandinError | undefined;
}

/**
 * Hosts a request listener on `127.0.0.1` as a {@link Standin}: the call record, fault injection
 * and an idempotent close. {@link startStandin} builds on it; a stand-in that wraps a package's
 * own server (S3 via s3rver) uses it directly.
 *
 * @param onClose - run after the server closed (e.g. remove a temporary directory).
 */
export async function hostStandin(
  service: string,
  listener: (request: IncomingMessage, response: ServerResponse, tools: StandinTools) => void,
  options: { port?: number; onClose?: () => void | Promise<void> } = {},
): Promise<Standin> {
  const calls: RecordedCall[] = [];
  let faults: Array<InjectedFault & { left: number }> = [];
  const tools: StandinTools = {
    calls,
    takeFault(operation) {
      const fault = faults.find((f) => f.left > 0 && (f.operation === '*' || f.operation === operation));
      if (!fault) return undefined;
      fault.left -= 1;
      return fault.error;
    },
  };
  const server: Server = createServer((request, response) => listener(request, response, tools));
  server.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  let closed = false;
  return {
    service,
    url: `http://127.0.0.1:${port}`,
    calls,
    fail(fault) {
      faults.push({ ...fault, left: fault.times ?? Number.POSITIVE_INFINITY });
    },
    clearFaults() {
      faults = [];
    },
    async close() {
      if (closed) return;
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await options.onClose?.();
    },
  };
}

/**
 * Starts a stand-in on `127.0.0.1` (a free port unless `port` is given).
 *
 * @example
 * const cw = await startStandin({ service: 'CloudWatch', protocol, operations: { DescribeAlarms } });
 * process.env.AWS_ENDPOINT_URL_CLOUDWATCH = cw.url;
 */
export function startStandin(
  definition: StandinDefinition,
  options: { port?: number } = {},
): Promise<Standin> {
  const { protocol, operations } = definition;
  return hostStandin(
    definition.service,
    (request, response, { calls, takeFault }) => {
      void (async () => {
        const ctx = callerOf(request);
        let decoded: DecodedRequest | undefined;
        try {
          decoded = protocol.decode(request, await readBody(request));
          const { operation, input } = decoded;
          const fault = takeFault(operation);
          if (fault) throw fault;
          const handler = Object.hasOwn(operations, operation) ? operations[operation] : undefined;
          if (!handler)
            throw new StandinError(
              'UnknownOperationException',
              `the local ${definition.service} stand-in does not implement ${operation}`,
            );
          const output = await handler(input, ctx);
          calls.push({ operation, input, accessKeyId: ctx.accessKeyId });
          send(response, protocol.encodeResult(operation, output));
        } catch (thrown) {
          const error =
            thrown instanceof StandinError
              ? thrown
              : new StandinError(
                  'InternalFailure',
                  thrown instanceof Error ? thrown.message : String(thrown),
                  500,
                );
          calls.push({
            operation: decoded?.operation ?? '(undecodable)',
            input: decoded?.input ?? {},
            accessKeyId: ctx.accessKeyId,
            error: error.code,
          });
          send(response, protocol.encodeError(error));
        }
      })();
    },
    options,
  );
}

/** Epoch seconds (how awsJson carries a timestamp) of a Date. */
export function epochSeconds(date: Date): number {
  return date.getTime() / 1000;
}

/** A required string member of an input, or a `ValidationException` naming it. */
export function requireString(
  input: Record<string, unknown>,
  member: string,
  code = 'ValidationException',
): string {
  const value = input[member];
  if (typeof value !== 'string' || value === '')
    throw new StandinError(
      code,
      `1 validation error detected: Value at '${member}' failed to satisfy constraint: Member must not be null`,
    );
  return value;
}
