/**
 * The cold path of a bundle, from its esbuild metafile: the inputs reached from the entry through
 * static imports (`import`, `require`), not through `await import()`. Without code splitting a
 * dynamically imported module is still in the file, but esbuild wraps it and evaluates it on first
 * use only, so its bytes are parsed lazily and cost no evaluation at init. docs/bundles.md.
 *
 * @see https://esbuild.github.io/api/#metafile
 */
import type { Metafile } from 'esbuild';

/** Bytes of one bundle, total and on its static import graph. */
export interface BundleBytes {
  /** Bytes of every input in the output (`bytesInOutput`, summed). */
  total: number;
  /** Bytes of the inputs the entry reaches through static imports only. */
  static: number;
  /** The statically reached inputs. */
  staticInputs: Set<string>;
}

/**
 * Measures `outfile` of `metafile` (built with `metafile: true`).
 * @throws Error when the metafile has no such output, or the output no entry point.
 */
export function bundleBytes(metafile: Metafile, outfile: string): BundleBytes {
  const output = Object.entries(metafile.outputs).find(([path]) => outfile.endsWith(path))?.[1];
  if (!output?.entryPoint) throw new Error(`bundleBytes: no entry output ${outfile} in the metafile`);
  const staticInputs = new Set<string>();
  const pending = [output.entryPoint];
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    if (staticInputs.has(path)) continue;
    staticInputs.add(path);
    for (const edge of metafile.inputs[path]?.imports ?? [])
      if (edge.kind !== 'dynamic-import' && !edge.external && metafile.inputs[edge.path])
        pending.push(edge.path);
  }
  const bytes = (paths: Iterable<string>) =>
    [...paths].reduce((sum, p) => sum + (output.inputs[p]?.bytesInOutput ?? 0), 0);
  return { total: bytes(Object.keys(output.inputs)), static: bytes(staticInputs), staticInputs };
}
