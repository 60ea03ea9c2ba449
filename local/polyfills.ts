/**
 * Node 20 lacks `Promise.withResolvers` (Node 22+), which `aws-local-stepfunctions` 3.x uses for
 * Task timeouts. Import this module before running a state machine locally. Lambda runs
 * nodejs22.x, where this is a no-op.
 */
type Resolvers<T> = { promise: Promise<T>; resolve: (value: T) => void; reject: (reason?: unknown) => void };

const ctor = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> };
if (typeof ctor.withResolvers !== 'function') {
  ctor.withResolvers = <T>(): Resolvers<T> => {
    let resolve!: (value: T) => void;
    let reject!: (reason?: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}
