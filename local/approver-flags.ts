/**
 * The approver flags of `npm start` and `npm run local` (`--approve`, `--reject`,
 * `--approve-via <name>`), read without importing any approver: local/main.ts refuses a conflict
 * before it loads the stack, and {@link ../approver.ts approverFromArgs} reads them the same way.
 */

/** Which approver flags a command line gives; `via` is the value after `--approve-via`, if any. */
export interface ApproverFlags {
  approve: boolean;
  reject: boolean;
  /** Index of `--approve-via` in argv, or -1. */
  viaIndex: number;
  via: string | undefined;
}

/** @throws Error `--approve, --reject and --approve-via: give at most one` when more than one is given. */
export function approverFlags(argv: readonly string[]): ApproverFlags {
  const approve = argv.includes('--approve');
  const reject = argv.includes('--reject');
  const viaIndex = argv.indexOf('--approve-via');
  const via = viaIndex >= 0 ? argv[viaIndex + 1] : undefined;
  if ([approve, reject, viaIndex >= 0].filter(Boolean).length > 1)
    throw new Error('--approve, --reject and --approve-via: give at most one');
  return { approve, reject, viaIndex, via };
}
