/**
 * The error of every invalid props of this package's constructs.
 *
 * aws-cdk-lib 2.276.0 has a `ValidationError` class, but marks it `@internal`: it is not part of
 * its public API (the API reference lists only `Errors.isValidationError`), and its constructor
 * takes a branded literal-string name from a private module. So this package throws its own
 * error of the same name, carrying the construct path as CDK's does; `Errors.isValidationError`
 * does not recognise it: test with `instanceof ValidationError` or `error.name`.
 *
 * @see https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.Errors.html
 */
import type { IConstruct } from 'constructs';

/**
 * Props of a construct failed its checks. Every problem is collected first and thrown once
 * (AWS Solutions Constructs style); each names the prop, the allowed range and the value given.
 *
 * @example
 * try {
 *   new MonitoredDlq(stack, 'Orders', { pipeline, queue, dlq, sampleSize: 0 });
 * } catch (error) {
 *   if (error instanceof ValidationError) console.error(error.constructPath, error.details);
 * }
 */
export class ValidationError extends Error {
  public override readonly name = 'ValidationError';
  /** The path of the construct whose props failed (`Consumer/Orders`), when there is one. */
  public readonly constructPath: string | undefined;
  /** One line per problem: `sampleSize: must be 1..100 (given: 0)`. */
  public readonly details: readonly string[];

  /**
   * @param kind - the construct's class, e.g. `MonitoredDlq`.
   * @param scope - the construct, or undefined for a check outside one (`registrationItem`).
   * @param what - what was checked. @default 'props'
   */
  public constructor(
    kind: string,
    scope: IConstruct | undefined,
    details: readonly string[],
    what = 'props',
  ) {
    const where = scope === undefined ? kind : `${kind} ${scope.node.path}`;
    super(`${where}: invalid ${what}: ${details.join('; ')}`);
    this.constructPath = scope?.node.path;
    this.details = details;
  }
}

/** Throws one {@link ValidationError} listing every problem, if there is any. */
export function throwIfInvalid(
  kind: string,
  scope: IConstruct | undefined,
  problems: readonly string[],
  what = 'props',
): void {
  if (problems.length > 0) throw new ValidationError(kind, scope, problems, what);
}
