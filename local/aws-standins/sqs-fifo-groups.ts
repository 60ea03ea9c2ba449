/**
 * SQS's FIFO rule the `local-aws-sqs` stand-in does not keep: while a message of a message group is
 * in flight (received, not deleted, its visibility timeout not over), ReceiveMessage returns no
 * other message of that group. The stand-in hands out the rest of the group at once, so a scan or a
 * mover that holds a group's head would see (and could move) messages real SQS hides behind it.
 *
 * {@link FifoGroupGate} is used by the SQS proxy (sqs-kms.ts, `startLocalStack({ sqsBlocksFifoGroups:
 * true })`): it watches every request that ends a message's flight (DeleteMessage(Batch),
 * ChangeMessageVisibility(Batch)), and filters each ReceiveMessage answer of a `.fifo` queue,
 * handing the messages of a group that is in flight back to the stand-in (visibility 0) instead of
 * to the caller. What stays different: the stand-in counts that hand-back as one more receive
 * (ApproximateReceiveCount grows by 2 for a message the gate held back), and its in-flight count
 * includes those messages for the moment of the hand-back.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-understanding-logic.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html
 */

/** One received message as the awsJson answer carries it. */
interface WireMessage {
  ReceiptHandle?: string | undefined;
  Attributes?: Record<string, string> | undefined;
}

interface Flight {
  queue: string;
  group: string;
  /** Epoch milliseconds when the visibility timeout ends. */
  until: number;
}

/** The queue name of a QueueUrl (the last path segment). */
const queueOf = (url: string | undefined) => (url ?? '').replace(/\/+$/, '').split('/').pop() ?? '';

/** Tracks which FIFO message groups are in flight and filters receives by it (see the module comment). */
export class FifoGroupGate {
  private readonly flights = new Map<string, Flight>();

  /**
   * @param only - gate only FIFO queues whose name matches (a demo gates its DLQ and leaves its
   *   source queue to the stand-in, whose consumer the hand-backs' extra receive counts would
   *   dead-letter early). @default every FIFO queue
   * @param now - epoch milliseconds (tests may pass a clock).
   */
  public constructor(
    private readonly only?: RegExp,
    private readonly now: () => number = Date.now,
  ) {}

  /** True for the QueueUrl of a FIFO queue the gate filters. */
  public gates(queueUrl: unknown): boolean {
    if (typeof queueUrl !== 'string') return false;
    const name = queueOf(queueUrl);
    return name.endsWith('.fifo') && (this.only?.test(name) ?? true);
  }

  /** True when a message of `group` of `queue` is in flight. */
  public inFlight(queue: string, group: string): boolean {
    const now = this.now();
    for (const [handle, f] of this.flights) {
      if (f.until <= now) this.flights.delete(handle);
      else if (f.queue === queue && f.group === group) return true;
    }
    return false;
  }

  /** Sees a request before it is forwarded: deletes and visibility changes end or extend a flight. */
  public request(operation: string, body: Record<string, unknown>): void {
    const handles = (entries: unknown) =>
      Array.isArray(entries)
        ? (entries as Array<{ ReceiptHandle?: string; VisibilityTimeout?: number }>)
        : [];
    switch (operation) {
      case 'DeleteMessage':
        this.flights.delete(String(body.ReceiptHandle));
        break;
      case 'DeleteMessageBatch':
        for (const e of handles(body.Entries)) this.flights.delete(String(e.ReceiptHandle));
        break;
      case 'ChangeMessageVisibility':
        this.extend(String(body.ReceiptHandle), Number(body.VisibilityTimeout));
        break;
      case 'ChangeMessageVisibilityBatch':
        for (const e of handles(body.Entries))
          this.extend(String(e.ReceiptHandle), Number(e.VisibilityTimeout));
        break;
    }
  }

  /**
   * Filters a ReceiveMessage answer: messages of a group already in flight are taken out (returned
   * in `handBack`, for the caller to release upstream); the others start their flight.
   * @param request - the caller's QueueUrl and VisibilityTimeout.
   * @param asked - the AttributeNames the caller asked for (the gate's own `MessageGroupId` is
   *   removed from answers that did not ask for it).
   * @param defaultVisibilitySeconds - the queue's VisibilityTimeout, for a receive that names none.
   */
  public receive(
    request: { QueueUrl?: string; VisibilityTimeout?: number },
    asked: readonly string[],
    messages: WireMessage[],
    defaultVisibilitySeconds: number,
  ): { messages: WireMessage[]; handBack: string[] } {
    const queue = queueOf(request.QueueUrl);
    if (!queue.endsWith('.fifo')) return { messages, handBack: [] };
    const seconds = request.VisibilityTimeout ?? defaultVisibilitySeconds;
    const until = this.now() + seconds * 1000;
    const kept: WireMessage[] = [];
    const handBack: string[] = [];
    const blocked = new Set<string>();
    const startedNow = new Set<string>();
    for (const m of messages) {
      const group = m.Attributes?.MessageGroupId ?? '';
      if (blocked.has(group) || (!startedNow.has(group) && this.inFlight(queue, group))) {
        blocked.add(group);
        if (m.ReceiptHandle) handBack.push(m.ReceiptHandle);
        continue;
      }
      startedNow.add(group);
      if (m.ReceiptHandle && seconds > 0) this.flights.set(m.ReceiptHandle, { queue, group, until });
      const wanted = asked.includes('All') || asked.includes('MessageGroupId');
      if (!wanted && m.Attributes) {
        const { MessageGroupId: _g, ...rest } = m.Attributes;
        m.Attributes = rest;
        if (Object.keys(rest).length === 0) delete m.Attributes;
      }
      kept.push(m);
    }
    return { messages: kept, handBack };
  }

  private extend(handle: string, seconds: number): void {
    const flight = this.flights.get(handle);
    if (!flight) return;
    if (!(seconds > 0)) this.flights.delete(handle);
    else flight.until = this.now() + seconds * 1000;
  }
}
