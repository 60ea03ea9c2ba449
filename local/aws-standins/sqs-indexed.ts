/**
 * The SQS stand-in: the installed `local-aws-sqs` bundle with exact text edits, compiled in this
 * process. Same wire protocol; the edits make it keep SQS's rules where the product's correctness
 * depends on them (docs/local-only.md, "SQS"; each rule has a test in test/conformance/sqs-*):
 * FIFO deduplication over the 5-minute interval, deleted messages included; message groups
 * blocked while one of their messages is in flight; ApproximateNumberOfMessages without in-flight
 * messages; only receives counted in ApproximateReceiveCount, which dead-lettering keeps; sizes
 * in UTF-8 and raw bytes (sqs-fidelity.ts holds those functions); a message at most once per
 * receive. And a message found by id costs the same at any depth.
 *
 * Why: the package keeps each queue's messages in one array and finds a message by a linear
 * search of it (DeleteMessage, ChangeMessageVisibility, the move to the DLQ and the retention
 * expiry), counts in-flight messages by filtering the whole queue on every ReceiveMessage and
 * GetQueueAttributes, and scans from the queue's head past every held message on every
 * ReceiveMessage. A 100,000-message run thus costs the square of the depth here (docs/cost-model.md,
 * "What stops a 100,000-message run"); on SQS these calls do not grow with the depth.
 *
 * How: the queue's records array becomes an {@link IndexedRecords} (a plain Array with an index
 * beside it: a map from MessageId to record, counts of in-flight, not-delayed and receivable records
 * kept as records change, and a heap of receivable records in queue order); the edits below point
 * the queue's lookups, counts and receive scan at it. The package's source is not copied into this repository: only
 * the short anchored edits live here.
 *
 * The edits are for `local-aws-sqs` {@link EDITED_VERSION} exactly (package.json pins it): another
 * installed version, or an anchor that does not match exactly once, throws
 * {@link SqsStandinPatchError} naming the version and the edit, so an upgrade fails loudly in the
 * tests instead of silently running the unindexed queue.
 *
 * @see https://github.com/Inqnuam/local-aws-sqs/blob/main/src/lib/queue.ts (the unminified queue)
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { compileFunction } from 'node:vm';
import type * as LocalAwsSqs from 'local-aws-sqs';
import * as fidelity from './sqs-fidelity.js';

/** The `local-aws-sqs` version whose minified bundle the {@link EDITS} match. */
export const EDITED_VERSION = '2.0.2';

/** One exact text edit of the bundle: `find` must occur exactly once. */
export interface BundleEdit {
  /** Names the edit in errors. */
  readonly name: string;
  readonly find: string;
  readonly replace: string;
}

/**
 * The edits, in the bundle's minified names (2.0.2): `E` is the queue's private `#records`
 * (a WeakMap read through `S(this,E)`, written through `m(this,E,…)` and `C(this,E,…)`), each
 * element `{ visible, delayed, record, tm, tmRetention }`. `__sqsIndexed` is the parameter the
 * compiled bundle receives holding {@link indexedRecords}.
 */
export const EDITS: readonly BundleEdit[] = [
  // The queue's records start as an IndexedRecords (the constructor's `#records = []`); the
  // queue is passed so a FIFO queue's receive keeps its message groups.
  { name: 'records-init', find: 'm(this,E,[])', replace: 'm(this,E,__sqsIndexed.indexedRecords(this))' },
  // PurgeQueue's clearRecords() starts a new one the same way.
  { name: 'records-clear', find: 'C(this,E,[])', replace: 'C(this,E,__sqsIndexed.indexedRecords(this))' },
  // The internal clear-record (move to the DLQ, retention expiry): findIndex by id was a closure
  // call per message; the map finds the record, a binary search by push order its index for
  // the splice (the array stays in push order).
  {
    name: 'clear-record-by-id',
    find: 'S(this,E).findIndex(i=>i.record.MessageId==t)',
    replace: 'S(this,E).indexOfId(t)',
  },
  // DeleteMessage(Batch): the same lookup.
  {
    name: 'delete-by-id',
    find: 'S(this,E).findIndex(r=>r.record.MessageId==e)',
    replace: 'S(this,E).indexOfId(e)',
  },
  // ChangeMessageVisibility(Batch): find by id through the map.
  {
    name: 'change-visibility-by-id',
    find: 'S(this,E).find(o=>o.record.MessageId==i)',
    replace: 'S(this,E).findById(i)',
  },
  // ReceiveMessage's in-flight check filtered the whole queue on every call: a kept count.
  {
    name: 'receive-in-flight-count',
    find: 'd=S(this,E).filter(f=>!f.visible).length',
    replace: 'd=S(this,E).invisible',
  },
  // ReceiveMessage's scan went from the queue's head past every held (and delayed) message on
  // every 10 ms tick: it now walks only the receivable ones, in the same queue order (and, in a
  // FIFO queue, none of a message group that is in flight).
  {
    name: 'receive-scan',
    find: 'for(let y of S(this,E))if(!y.delayed)',
    replace: 'for(let y of S(this,E).receivable())if(!y.delayed)',
  },
  // One ReceiveMessage returns a message at most once (the package's 10 ms polling handed a
  // message received with VisibilityTimeout 0 out again in the same answer).
  {
    name: 'receive-once-per-call',
    find: 'if(y.visible){l(this,D,Wt).call(this,y,i);',
    replace: 'if(y.visible&&!r.some(x=>x.record.MessageId==y.record.MessageId)){l(this,D,Wt).call(this,y,i);',
  },
  // GetQueueAttributes: ApproximateNumberOfMessages is the visible messages (the package counted
  // in-flight ones too); both from kept counts instead of two filters of the whole queue.
  {
    name: 'attributes-visible',
    find: 'ApproximateNumberOfMessages:String(S(this,E).filter(o=>!o.delayed).length)',
    replace: 'ApproximateNumberOfMessages:String(S(this,E).receivableCount)',
  },
  {
    name: 'attributes-not-visible',
    find: 'ApproximateNumberOfMessagesNotVisible:String(S(this,E).filter(o=>!o.visible).length)',
    replace: 'ApproximateNumberOfMessagesNotVisible:String(S(this,E).invisible)',
  },
  // A move task's ApproximateNumberOfMessagesToMove: the visible messages at its start (the
  // package subtracted the in-flight ones from its count that included them).
  {
    name: 'move-task-to-move',
    find: 'this.ApproximateNumberOfMessagesToMove=Number(n)-Number(o)',
    replace: 'this.ApproximateNumberOfMessagesToMove=Number(n)',
  },
  // Only a receive counts: ChangeMessageVisibility (`i` true), a release included, does not.
  {
    name: 'receive-count-receives-only',
    find: 'let n=Number(t.record.attributes.ApproximateReceiveCount)+1',
    replace: 'let n=Number(t.record.attributes.ApproximateReceiveCount)+(i?0:1)',
  },
  // FIFO deduplication over the 5-minute interval, deleted messages included (sqs-fidelity.ts).
  {
    name: 'dedup-interval',
    find:
      'm(this,Ye,(t,e)=>this.DeduplicationScope=="queue"?S(this,E).find(i=>i.record.attributes.MessageDeduplicationId==e):' +
      'S(this,E).find(i=>i.record.attributes.MessageGroupId==t&&i.record.attributes.MessageDeduplicationId==e))',
    replace: 'm(this,Ye,(t,e)=>__sqsIndexed.seen(this,t,e))',
  },
  // Dead-lettering (setRecord with the message's own id, `e`) is not a send: no deduplication.
  {
    name: 'dead-letter-not-deduplicated',
    find: 't.MessageGroupId&&this.FifoQueue&&(r=S(this,Ye).call(this,t.MessageGroupId,t.MessageDeduplicationId),',
    replace:
      't.MessageGroupId&&this.FifoQueue&&(r=e===void 0?S(this,Ye).call(this,t.MessageGroupId,t.MessageDeduplicationId):void 0,',
  },
  {
    name: 'dedup-remember',
    find: 'let a=this.newRecord(n,Number(t.DelaySeconds))',
    replace: 'let a=(__sqsIndexed.remember(this,n),this.newRecord(n,Number(t.DelaySeconds)))',
  },
  // A FIFO DLQ copy's deduplication id is the message's id; it keeps its receive count.
  {
    name: 'dead-letter-dedup-id',
    find: 'typeof n.MessageDeduplicationId!="undefined"&&(a=n.MessageDeduplicationId)',
    replace: 'typeof n.MessageDeduplicationId!="undefined"&&(a=i)',
  },
  {
    name: 'dead-letter-receive-count',
    find: 'e==null||e.setRecord(y,i)',
    replace: 'e==null||__sqsIndexed.deadLettered(e.setRecord(y,i),t.record)',
  },
  // Sizes in UTF-8 bytes, binary attributes by raw bytes: SendMessage, a FIFO SendMessage,
  // a SendMessageBatch's total and each of its entries.
  {
    name: 'size-send',
    find:
      'let r=e.MessageBody.length;if(i){let o=Object.values(i);for(let d of o){Ce(d);let{StringValue:c,BinaryValue:y,DataType:f}=d;' +
      'typeof f=="string"&&(r+=f.length),typeof c=="string"&&(r+=c.length),typeof y=="string"&&(r+=y.length)}H(i);let a=Object.keys(i);for(let d of a)r+=d.length}',
    replace:
      'let r=__sqsIndexed.bytes(e.MessageBody);if(i){for(let d of Object.values(i))Ce(d);H(i);r+=__sqsIndexed.attributeBytes(i)}',
  },
  {
    name: 'size-send-fifo',
    find:
      'let r=i.MessageBody.length,n=i.MessageAttributes;if(n){let a=Object.values(n);H(n);for(let c of a){let{StringValue:y,BinaryValue:f,DataType:g}=c;' +
      'typeof g=="string"&&(r+=g.length),typeof y=="string"&&(r+=y.length),typeof f=="string"&&(r+=f.length)}let d=Object.keys(n);for(let c of d)r+=c.length}',
    replace:
      'let r=__sqsIndexed.bytes(i.MessageBody),n=i.MessageAttributes;if(n){H(n);r+=__sqsIndexed.attributeBytes(n)}',
  },
  {
    name: 'size-batch-total',
    find:
      'typeof e.MessageBody=="string"&&(t+=e.MessageBody.length),M(e.MessageAttributes))for(let i of Object.keys(e.MessageAttributes)){t+=i.length;' +
      'let r=e.MessageAttributes[i];if(!M(r))continue;let{StringValue:n,BinaryValue:o,DataType:a}=r;' +
      'typeof a=="string"&&(t+=a.length),typeof n=="string"&&(t+=n.length),typeof o=="string"&&(t+=o.length)}',
    replace:
      'typeof e.MessageBody=="string"&&(t+=__sqsIndexed.bytes(e.MessageBody)),M(e.MessageAttributes))t+=__sqsIndexed.attributeBytes(e.MessageAttributes);',
  },
  {
    name: 'size-batch-entry',
    find:
      'let i=s.MessageBody.length,r=s.MessageAttributes;if(r)try{let a=Object.values(r);H(r);for(let c of a){let{StringValue:y,BinaryValue:f,DataType:g}=c;' +
      'typeof g=="string"&&(i+=g.length),typeof y=="string"&&(i+=y.length),typeof f=="string"&&(i+=f.length)}let d=Object.keys(r);for(let c of d)i+=c.length}',
    replace:
      'let i=__sqsIndexed.bytes(s.MessageBody),r=s.MessageAttributes;if(r)try{H(r);i+=__sqsIndexed.attributeBytes(r)}',
  },
];

/** Thrown when the installed `local-aws-sqs` is not the one the edits were written for. */
export class SqsStandinPatchError extends Error {
  override readonly name = 'SqsStandinPatchError';
  constructor(
    message: string,
    /** The edit that did not apply, when one did not. */
    readonly edit?: string,
  ) {
    super(message);
  }
}

/**
 * Applies `edits` to the bundle's source text.
 * @param source - the text of `local-aws-sqs/dist/index.js`.
 * @param version - the installed package's version, for the error message.
 * @throws SqsStandinPatchError when an edit's `find` occurs zero times or more than once.
 */
export function applyEdits(source: string, version: string, edits: readonly BundleEdit[] = EDITS): string {
  let text = source;
  for (const edit of edits) {
    const at = text.indexOf(edit.find);
    const count = at < 0 ? 0 : text.split(edit.find).length - 1;
    if (count !== 1) {
      throw new SqsStandinPatchError(
        `local-aws-sqs ${version}: edit '${edit.name}' expects its anchor exactly once, found ${count} ` +
          `(the edits in local/aws-standins/sqs-indexed.ts are for ${EDITED_VERSION}): ${edit.find}`,
        edit.name,
      );
    }
    text = text.slice(0, at) + edit.replace + text.slice(at + edit.find.length);
  }
  return text;
}

/** A queue record of the bundle, as far as the index reads it. */
interface QueueRecord {
  visible: boolean;
  delayed: boolean;
  record: { MessageId: string; attributes?: { MessageGroupId?: string } };
}

/** The bundle's queue, as far as the index reads it. */
interface QueueLike {
  FifoQueue?: boolean;
}

// Per-record state behind the `visible` / `delayed` accessors: non-enumerable symbol keys, so the
// bundle's copies of a record (`{...record}` in receive) see plain `visible` and `delayed` only.
const VISIBLE = Symbol('visible');
const DELAYED = Symbol('delayed');
const OWNER = Symbol('owner');
const SEQ = Symbol('seq');
const QUEUED = Symbol('queued');

interface Tracked extends QueueRecord {
  [VISIBLE]: boolean;
  [DELAYED]: boolean;
  [OWNER]: RecordIndex | undefined;
  [SEQ]: number;
  [QUEUED]: boolean;
}

function hidden(record: object, key: symbol, value: unknown): void {
  Object.defineProperty(record, key, { value, writable: true, enumerable: false, configurable: true });
}

/** A queue's records as the edited bundle uses them: an Array with an index beside it. */
export interface IndexedRecords extends Array<QueueRecord> {
  /** Records in flight (`visible` false): ApproximateNumberOfMessagesNotVisible. */
  readonly invisible: number;
  /** Records whose delay has passed. */
  readonly notDelayed: number;
  /** Records visible and not delayed: ApproximateNumberOfMessages. */
  readonly receivableCount: number;
  /** The record with this MessageId, as `find(x => x.record.MessageId == id)`. */
  findById(id: unknown): QueueRecord | undefined;
  /** Its index, as `findIndex(x => x.record.MessageId == id)`: -1 when absent. */
  indexOfId(id: unknown): number;
  /**
   * The records a receive may hand out (visible, delay passed), in queue order, each at most
   * once per call: the caller makes each one it gets in flight (the bundle's receive does); one
   * that turns visible again is queued again. In a FIFO queue, none of a message group that was
   * in flight when the call began: those wait until their group has none in flight.
   */
  receivable(): Generator<QueueRecord>;
}

/** What the accessors of a record report to: its queue's index. */
class RecordIndex {
  invisible = 0;
  notDelayed = 0;
  receivableCount = 0;
  /** FIFO: records in flight by message group. */
  readonly inFlightByGroup = new Map<string, number>();
  /** FIFO: receivable records held back until their group has none in flight. */
  readonly heldByGroup = new Map<string, Tracked[]>();
  readonly byId = new Map<string, Tracked>();
  // False once two records of the queue share a MessageId (the package never makes that, but
  // nothing forbids it): lookups then search as the package did, first match wins.
  unique = true;
  nextSeq = 0;
  /** Min-heap by position in the queue of the records that may be receivable. */
  readonly heap: Tracked[] = [];

  constructor(
    readonly records: QueueRecord[],
    readonly queue: QueueLike,
  ) {}

  adopt(plain: QueueRecord): void {
    const record = plain as Tracked;
    const { visible, delayed } = plain;
    hidden(record, VISIBLE, visible);
    hidden(record, DELAYED, delayed);
    hidden(record, OWNER, this);
    hidden(record, SEQ, this.nextSeq++);
    hidden(record, QUEUED, false);
    Object.defineProperty(record, 'visible', STATE_ACCESSORS.visible);
    Object.defineProperty(record, 'delayed', STATE_ACCESSORS.delayed);
    this.count(record, visible, delayed, 1);
    const id = String(record.record.MessageId);
    if (this.byId.has(id)) this.unique = false;
    else this.byId.set(id, record);
    this.enqueueIfReceivable(record);
  }

  release(record: Tracked): void {
    if (record[OWNER] !== this) return;
    record[OWNER] = undefined;
    this.count(record, record[VISIBLE], record[DELAYED], -1);
    const id = String(record.record.MessageId);
    if (this.byId.get(id) === record) this.byId.delete(id);
  }

  changed(record: Tracked, wasVisible: boolean, wasDelayed: boolean): void {
    this.count(record, wasVisible, wasDelayed, -1);
    this.count(record, record[VISIBLE], record[DELAYED], 1);
    this.enqueueIfReceivable(record);
  }

  /** Adds `sign` times a record in this state to the counts. */
  private count(record: Tracked, visible: boolean, delayed: boolean, sign: 1 | -1): void {
    if (!visible) this.invisible += sign;
    if (!delayed) this.notDelayed += sign;
    if (visible && !delayed) this.receivableCount += sign;
    const group = record.record.attributes?.MessageGroupId;
    if (visible || group === undefined) return;
    const now = (this.inFlightByGroup.get(group) ?? 0) + sign;
    if (now > 0) this.inFlightByGroup.set(group, now);
    else {
      this.inFlightByGroup.delete(group);
      this.releaseGroup(group);
    }
  }

  /** Queues again the records held back behind a group that has none in flight now. */
  private releaseGroup(group: string): void {
    const held = this.heldByGroup.get(group);
    if (!held) return;
    this.heldByGroup.delete(group);
    for (const record of held) if (record[OWNER] === this) this.enqueueIfReceivable(record);
  }

  findById(id: unknown): Tracked | undefined {
    if (!this.unique) {
      // biome-ignore lint/suspicious/noDoubleEquals: the package compares loosely; so does its fallback.
      return this.records.find((x) => x.record.MessageId == id) as Tracked | undefined;
    }
    return this.byId.get(String(id));
  }

  /** The record's index: the array stays sorted by push sequence (push appends, splice removes). */
  indexOf(record: Tracked): number {
    const records = this.records as Tracked[];
    const seq = record[SEQ];
    let low = 0;
    let high = records.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const at = (records[mid] as Tracked)[SEQ];
      if (at === seq) return records[mid] === record ? mid : records.indexOf(record);
      if (at < seq) low = mid + 1;
      else high = mid - 1;
    }
    return -1;
  }

  *receivable(): Generator<QueueRecord> {
    const heap = this.heap;
    // FIFO: the groups in flight when the receive began (one receive may return several
    // messages of a group; a group already in flight returns none).
    const blocked = this.queue.FifoQueue ? new Set(this.inFlightByGroup.keys()) : undefined;
    // Records the caller passed over (still receivable after the yield) go back once this call ends.
    const passed: Tracked[] = [];
    try {
      while (heap.length > 0) {
        const record = heapPop(heap);
        record[QUEUED] = false;
        if (record[OWNER] !== this || !record[VISIBLE] || record[DELAYED]) continue;
        const group = record.record.attributes?.MessageGroupId;
        if (blocked && group !== undefined && blocked.has(group) && this.inFlightByGroup.has(group)) {
          const held = this.heldByGroup.get(group);
          if (held) held.push(record);
          else this.heldByGroup.set(group, [record]);
          continue;
        }
        yield record;
        if (record[VISIBLE] && !record[DELAYED]) passed.push(record);
      }
    } finally {
      for (const record of passed) if (record[OWNER] === this) this.enqueueIfReceivable(record);
    }
  }

  private enqueueIfReceivable(record: Tracked): void {
    if (record[VISIBLE] && !record[DELAYED] && !record[QUEUED]) {
      record[QUEUED] = true;
      heapPush(this.heap, record);
    }
  }
}

/**
 * A queue's records (the bundle's `#records`), indexed: a plain Array (so push, splice, indexOf
 * and iteration keep V8's fast paths; an Array subclass measured 60 times slower in splice at
 * 100,000 records) whose push and splice keep a {@link RecordIndex} beside it: MessageId to record,
 * the numbers of in-flight and of not-delayed records, and a heap of the receivable ones. The
 * bundle only pushes, splices (removing), iterates and reads it.
 */
export function indexedRecords(queue: QueueLike = {}): IndexedRecords {
  const records: QueueRecord[] = [];
  const index = new RecordIndex(records, queue);
  const method = (value: unknown): PropertyDescriptor => ({ value, enumerable: false });
  Object.defineProperties(records, {
    push: method((...added: QueueRecord[]) => {
      for (const record of added) index.adopt(record);
      return Array.prototype.push.apply(records, added);
    }),
    splice: method((start: number, deleteCount?: number, ...items: QueueRecord[]) => {
      if (items.length > 0) {
        // Insertion would break the order by push sequence; the bundle never inserts.
        throw new Error('IndexedRecords: splice may only remove records');
      }
      // Not records.splice: that is this function. Without a count, splice removes to the end.
      const removed = Array.prototype.splice.call(records, start, deleteCount ?? records.length);
      for (const record of removed as Tracked[]) index.release(record);
      return removed;
    }),
    invisible: { get: () => index.invisible, enumerable: false },
    notDelayed: { get: () => index.notDelayed, enumerable: false },
    receivableCount: { get: () => index.receivableCount, enumerable: false },
    findById: method((id: unknown) => index.findById(id)),
    indexOfId: method((id: unknown) => {
      const record = index.findById(id);
      return record ? index.indexOf(record) : -1;
    }),
    receivable: method(() => index.receivable()),
  });
  return records as IndexedRecords;
}

// Shared accessors (one pair for all records, not closures per record); enumerable, so a copy
// of a record carries plain `visible` and `delayed` values as before.
const STATE_ACCESSORS = {
  visible: {
    enumerable: true,
    configurable: true,
    get(this: Tracked): boolean {
      return this[VISIBLE];
    },
    set(this: Tracked, value: boolean) {
      const wasVisible = this[VISIBLE];
      this[VISIBLE] = value;
      this[OWNER]?.changed(this, wasVisible, this[DELAYED]);
    },
  },
  delayed: {
    enumerable: true,
    configurable: true,
    get(this: Tracked): boolean {
      return this[DELAYED];
    },
    set(this: Tracked, value: boolean) {
      const wasDelayed = this[DELAYED];
      this[DELAYED] = value;
      this[OWNER]?.changed(this, this[VISIBLE], wasDelayed);
    },
  },
} satisfies Record<string, PropertyDescriptor>;

function heapPush(heap: Tracked[], record: Tracked): void {
  let i = heap.push(record) - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const above = heap[parent] as Tracked;
    if (above[SEQ] <= record[SEQ]) break;
    heap[i] = above;
    i = parent;
  }
  heap[i] = record;
}

function heapPop(heap: Tracked[]): Tracked {
  const top = heap[0] as Tracked;
  const last = heap.pop() as Tracked;
  if (heap.length > 0) {
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child =
        right < heap.length && (heap[right] as Tracked)[SEQ] < (heap[left] as Tracked)[SEQ] ? right : left;
      const below = heap[child] as Tracked;
      if (last[SEQ] <= below[SEQ]) break;
      heap[i] = below;
      i = child;
    }
    heap[i] = last;
  }
  return top;
}

type Bundle = typeof LocalAwsSqs;
let loaded: Bundle | undefined;

/**
 * The edited bundle, compiled once per process as a CommonJS module (its `require` resolves from
 * the installed package's folder, so its own dependencies load as usual).
 * @throws SqsStandinPatchError when the installed version is not {@link EDITED_VERSION} or an edit
 *   does not apply.
 */
export function loadIndexedSqs(): Bundle {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const filename = require.resolve('local-aws-sqs');
  const bundleRequire = createRequire(filename);
  const { version } = bundleRequire('../package.json') as { version: string };
  if (version !== EDITED_VERSION) {
    throw new SqsStandinPatchError(
      `local-aws-sqs ${version} is installed; the edits in local/aws-standins/sqs-indexed.ts are for ` +
        `${EDITED_VERSION}: check each edit against the new bundle, then update EDITED_VERSION`,
    );
  }
  const source = applyEdits(readFileSync(filename, 'utf8'), version);
  const module = { exports: {} as Bundle };
  const run = compileFunction(
    source,
    ['exports', 'require', 'module', '__filename', '__dirname', '__sqsIndexed'],
    { filename: `${filename} (indexed by sqs-indexed.ts)` },
  );
  run(module.exports, bundleRequire, module, filename, dirname(filename), {
    indexedRecords,
    ...fidelity,
  });
  loaded = module.exports;
  return loaded;
}

/**
 * `local-aws-sqs`'s `createSqsServer`, indexed: an HTTP server on `options.port` speaking SQS
 * (awsJson 1.0 and the query protocol).
 * @throws SqsStandinPatchError as {@link loadIndexedSqs}.
 */
export const createSqsServer: Bundle['createSqsServer'] = (options) =>
  loadIndexedSqs().createSqsServer(options);

/**
 * `local-aws-sqs`'s `createRequestHandler`, indexed: the SQS service and its request handler, for
 * a server of the caller's own (the proxies in sqs-kms.ts, sqs-account.ts).
 * @throws SqsStandinPatchError as {@link loadIndexedSqs}.
 */
export const createRequestHandler: Bundle['createRequestHandler'] = (options) =>
  loadIndexedSqs().createRequestHandler(options);
