/**
 * The `local-aws-sqs` SQS stand-in with its messages indexed: the installed package's own bundle,
 * with a few exact text edits, compiled in this process. Same wire protocol, same behaviour and
 * the same quirks the project relies on (ApproximateNumberOfMessages includes in-flight messages,
 * a release with visibility 0 increments the receive count, a receive with VisibilityTimeout 0
 * hands a message out several times), but a message found by id costs the same at any depth.
 *
 * Why: the package keeps each queue's messages in one array and finds a message by a linear
 * search of it (DeleteMessage, ChangeMessageVisibility, the move to the DLQ and the retention
 * expiry), counts in-flight messages by filtering the whole queue on every ReceiveMessage and
 * GetQueueAttributes, and scans from the queue's head past every held message on every
 * ReceiveMessage. A 100,000-message run thus costs the square of the depth here (docs/cost-model.md,
 * "What stops a 100,000-message run"); on SQS these calls do not grow with the depth.
 *
 * How: the queue's records array becomes an {@link IndexedRecords} (a plain Array with an index
 * beside it: a map from MessageId to record, counts of in-flight and not-delayed records kept as records change,
 * and a heap of receivable records in queue order); the edits below point the queue's lookups,
 * counts and receive scan at it. The package's source is not copied into this repository: only
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
  // The queue's records start as an IndexedRecords (the constructor's `#records = []`).
  { name: 'records-init', find: 'm(this,E,[])', replace: 'm(this,E,__sqsIndexed.indexedRecords())' },
  // PurgeQueue's clearRecords() starts a new one the same way.
  { name: 'records-clear', find: 'C(this,E,[])', replace: 'C(this,E,__sqsIndexed.indexedRecords())' },
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
  // every 10 ms tick: it now walks only the receivable ones, in the same queue order.
  {
    name: 'receive-scan',
    find: 'for(let y of S(this,E))if(!y.delayed)',
    replace: 'for(let y of S(this,E).receivable())if(!y.delayed)',
  },
  // GetQueueAttributes filtered the whole queue twice: kept counts.
  {
    name: 'attributes-not-delayed',
    find: 'ApproximateNumberOfMessages:String(S(this,E).filter(o=>!o.delayed).length)',
    replace: 'ApproximateNumberOfMessages:String(S(this,E).notDelayed)',
  },
  {
    name: 'attributes-not-visible',
    find: 'ApproximateNumberOfMessagesNotVisible:String(S(this,E).filter(o=>!o.visible).length)',
    replace: 'ApproximateNumberOfMessagesNotVisible:String(S(this,E).invisible)',
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
  record: { MessageId: string };
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
  /** Records whose delay has passed: the package's ApproximateNumberOfMessages. */
  readonly notDelayed: number;
  /** The record with this MessageId, as `find(x => x.record.MessageId == id)`. */
  findById(id: unknown): QueueRecord | undefined;
  /** Its index, as `findIndex(x => x.record.MessageId == id)`: -1 when absent. */
  indexOfId(id: unknown): number;
  /**
   * The records a receive may hand out (visible, delay passed), in queue order, each at most
   * once per call: the caller makes each one it gets in flight (the bundle's receive does); one
   * that turns visible again is queued again.
   */
  receivable(): Generator<QueueRecord>;
}

/** What the accessors of a record report to: its queue's index. */
class RecordIndex {
  invisible = 0;
  notDelayed = 0;
  readonly byId = new Map<string, Tracked>();
  // False once two records of the queue share a MessageId (the package never makes that, but
  // nothing forbids it): lookups then search as the package did, first match wins.
  unique = true;
  nextSeq = 0;
  /** Min-heap by position in the queue of the records that may be receivable. */
  readonly heap: Tracked[] = [];

  constructor(readonly records: QueueRecord[]) {}

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
    if (!visible) this.invisible++;
    if (!delayed) this.notDelayed++;
    const id = String(record.record.MessageId);
    if (this.byId.has(id)) this.unique = false;
    else this.byId.set(id, record);
    this.enqueueIfReceivable(record);
  }

  release(record: Tracked): void {
    if (record[OWNER] !== this) return;
    record[OWNER] = undefined;
    if (!record[VISIBLE]) this.invisible--;
    if (!record[DELAYED]) this.notDelayed--;
    const id = String(record.record.MessageId);
    if (this.byId.get(id) === record) this.byId.delete(id);
  }

  changed(record: Tracked, wasVisible: boolean, wasDelayed: boolean): void {
    this.invisible += Number(!record[VISIBLE]) - Number(!wasVisible);
    this.notDelayed += Number(!record[DELAYED]) - Number(!wasDelayed);
    this.enqueueIfReceivable(record);
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
    while (heap.length > 0) {
      const record = heapPop(heap);
      record[QUEUED] = false;
      if (record[OWNER] === this && record[VISIBLE] && !record[DELAYED]) yield record;
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
export function indexedRecords(): IndexedRecords {
  const records: QueueRecord[] = [];
  const index = new RecordIndex(records);
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
  run(module.exports, bundleRequire, module, filename, dirname(filename), { indexedRecords });
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
