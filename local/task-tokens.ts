/**
 * Local stand-in for Step Functions' task tokens (`.waitForTaskToken`): a token is created when a
 * callback Task starts, completes the Task once with `sendTaskSuccess` / `sendTaskFailure`, and is
 * closed when the Task times out. Errors carry the same names the real API returns, so code that
 * answers a late or repeated callback is exercised locally.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/connect-to-resource.html#connect-wait-token
 * @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_SendTaskSuccess.html
 */
import { randomBytes } from 'node:crypto';

/** Error names of SendTaskSuccess / SendTaskFailure that callers must handle. */
export type TaskTokenErrorName = 'InvalidToken' | 'TaskDoesNotExist' | 'TaskTimedOut' | 'InvalidOutput';

/** A callback refused the way Step Functions refuses it (`name` is the API's error code). */
export class TaskTokenError extends Error {
  public override readonly name: TaskTokenErrorName;
  /** Mirrors the SDK v3 error shape, so `awsErrorName()` recognises it. */
  public readonly $metadata = { httpStatusCode: 400 };
  public constructor(name: TaskTokenErrorName, message: string) {
    super(message);
    this.name = name;
  }
}

/** How a Task waiting for its token ended. */
export type TokenOutcome =
  | { kind: 'success'; output: unknown }
  | { kind: 'failure'; error: string; cause: string | null };

interface Pending {
  resolve: (outcome: TokenOutcome) => void;
  outcome: Promise<TokenOutcome>;
  closed: boolean;
  timer: NodeJS.Timeout | undefined;
}

/** Sends the result of a callback Task, like the `SendTaskSuccess` / `SendTaskFailure` API calls. */
export interface TaskTokenCallbacks {
  /**
   * Completes the Task with `output` (any JSON value).
   * @throws TaskTokenError `InvalidToken`, `TaskDoesNotExist`, `TaskTimedOut` (already completed or timed out).
   */
  sendTaskSuccess(taskToken: string, output: unknown): Promise<void>;
  /**
   * Fails the Task with an error name and cause (the ASL's Catch sees `error`).
   * @throws TaskTokenError as {@link TaskTokenCallbacks.sendTaskSuccess}.
   */
  sendTaskFailure(taskToken: string, error: string, cause?: string): Promise<void>;
}

const PREFIX = 'local-task-token.';

/** Issues and completes task tokens for locally run executions. */
export class TaskTokenRegistry implements TaskTokenCallbacks {
  private readonly pending = new Map<string, Pending>();

  /**
   * Creates a token for a Task that waits for a callback.
   *
   * @param timeoutSeconds - the Task's `TimeoutSeconds`; after it the token is closed (late
   *   callbacks get `TaskTimedOut`). Undefined: never closes on its own.
   * @returns the token and a promise settled by the first callback.
   */
  public create(timeoutSeconds?: number): { taskToken: string; outcome: Promise<TokenOutcome> } {
    const taskToken = `${PREFIX}${randomBytes(24).toString('base64url')}`;
    let resolve!: (outcome: TokenOutcome) => void;
    const outcome = new Promise<TokenOutcome>((r) => {
      resolve = r;
    });
    this.pending.set(taskToken, { resolve, outcome, closed: false, timer: undefined });
    if (timeoutSeconds !== undefined) this.expireAfter(taskToken, timeoutSeconds);
    return { taskToken, outcome };
  }

  /** The promise settled by the token's first callback. @throws TaskTokenError for unknown tokens. */
  public outcome(taskToken: string): Promise<TokenOutcome> {
    const entry = this.pending.get(taskToken);
    if (!entry) throw new TaskTokenError('TaskDoesNotExist', 'Task does not exist');
    return entry.outcome;
  }

  /** Closes the token `timeoutSeconds` from now unless a callback completes it first. */
  public expireAfter(taskToken: string, timeoutSeconds: number): void {
    const entry = this.pending.get(taskToken);
    if (!entry || entry.closed) return;
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = setTimeout(() => this.close(taskToken), timeoutSeconds * 1000);
    entry.timer.unref();
  }

  /** Closes a token without completing it (its Task timed out or its execution ended). */
  public close(taskToken: string): void {
    const entry = this.pending.get(taskToken);
    if (!entry) return;
    entry.closed = true;
    if (entry.timer) clearTimeout(entry.timer);
  }

  /** True while the token can still complete its Task. */
  public isOpen(taskToken: string): boolean {
    const entry = this.pending.get(taskToken);
    return entry !== undefined && !entry.closed;
  }

  public async sendTaskSuccess(taskToken: string, output: unknown): Promise<void> {
    let json: unknown;
    try {
      json = JSON.parse(JSON.stringify(output ?? null));
    } catch (error) {
      throw new TaskTokenError('InvalidOutput', `output is not JSON: ${String(error)}`);
    }
    this.take(taskToken).resolve({ kind: 'success', output: json });
  }

  public async sendTaskFailure(taskToken: string, error: string, cause?: string): Promise<void> {
    this.take(taskToken).resolve({ kind: 'failure', error, cause: cause ?? null });
  }

  private take(taskToken: string): Pending {
    if (!taskToken.startsWith(PREFIX)) throw new TaskTokenError('InvalidToken', 'Invalid Token');
    const entry = this.pending.get(taskToken);
    if (!entry) throw new TaskTokenError('TaskDoesNotExist', 'Task does not exist');
    if (entry.closed) throw new TaskTokenError('TaskTimedOut', 'Provided task does not exist anymore');
    this.close(taskToken);
    return entry;
  }
}
