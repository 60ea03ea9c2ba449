/**
 * The licences of what a Lambda bundle carries: from esbuild's metafile (every input file), the
 * packages bundled, each with its version, its `license` field and its licence text, written as
 * `THIRD-PARTY-LICENSES.txt` beside `index.mjs` (so it ships in the function's zip). esbuild's
 * legal comments do not do it: the SDK, zod, middy and Powertools keep no licence comment in
 * their sources (measured: a triage bundle's `legalComments: 'external'` file held one
 * `@preserve` line). Run after every bundling by `PIPELINE_BUNDLING`'s hook; docs/bundles.md.
 *
 * Usage: node infra/bundle-licences.ts <bundle output dir> (Node 22.6+ strips the types; else
 * `node --import tsx ...`)
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Metafile } from 'esbuild';

/** The file CDK's `metafile: true` writes in the bundle's output directory. */
export const METAFILE = 'index.meta.json';
/** The list written beside the bundle. */
export const LICENCES_FILE = 'THIRD-PARTY-LICENSES.txt';

/** A package a bundle carries. */
export interface BundledPackage {
  name: string;
  version: string;
  /** The package.json `license` field (SPDX expression), or `UNKNOWN`. */
  license: string;
  /** The text of its LICENSE / LICENCE / COPYING file, or null when it ships none. */
  text: string | null;
  /** Its repository or home page (where the licence is when the package ships no file), or null. */
  source: string | null;
}

/** The repository URL of a package.json (`repository` as a string or `{ url }`), else its homepage. */
function sourceOf(pkg: Record<string, unknown>): string | null {
  const repo = pkg.repository as string | { url?: unknown } | undefined;
  const url = typeof repo === 'string' ? repo : typeof repo?.url === 'string' ? repo.url : pkg.homepage;
  return typeof url === 'string' ? url.replace(/^git\+/, '') : null;
}

/** `node_modules/<pkg>` directories of the inputs (the last one of a nested path), relative to `root`. */
function packageDirs(metafile: Metafile): string[] {
  const dirs = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match?.[1]) dirs.add(match[1]);
  }
  return [...dirs];
}

/**
 * The packages whose files are inputs of the bundle, sorted by name then version.
 * @param root - the directory esbuild ran in (the metafile's paths are relative to it).
 */
export function bundledPackages(metafile: Metafile, root: string): BundledPackage[] {
  return packageDirs(metafile)
    .map((dir) => {
      const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      const file = readdirSync(join(root, dir)).find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
      return {
        name: String(pkg.name),
        version: String(pkg.version),
        license: typeof pkg.license === 'string' ? pkg.license : 'UNKNOWN',
        text: file ? readFileSync(join(root, dir, file), 'utf8').trim() : null,
        source: sourceOf(pkg),
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
}

/** The list as text: every package with its licence, then each distinct licence text once. */
export function formatLicences(packages: readonly BundledPackage[]): string {
  const texts = [...new Set(packages.flatMap((p) => (p.text === null ? [] : [p.text])))];
  const lines = packages.map((p) => {
    const ref =
      p.text === null
        ? `no licence file in the package; see ${p.source ?? 'its npm page'}`
        : `text ${texts.indexOf(p.text) + 1} below`;
    return `${p.name}@${p.version}  ${p.license}  (${ref})`;
  });
  return [
    'Third-party packages in this bundle, with their licences (from the bundle metafile).',
    '',
    ...lines,
    ...texts.flatMap((text, i) => ['', `=== text ${i + 1} ===`, '', text]),
    '',
  ].join('\n');
}

/**
 * Writes `THIRD-PARTY-LICENSES.txt` in `outDir` from its `index.meta.json`, then removes the
 * metafile (it is not code: it would only add to the function's zip).
 * @param root - the directory esbuild ran in.
 * @throws Error when the metafile is missing (the bundling options must set `metafile: true`).
 */
export function writeBundleLicences(outDir: string, root: string): BundledPackage[] {
  const metaPath = join(outDir, METAFILE);
  if (!existsSync(metaPath)) throw new Error(`bundle-licences: no ${METAFILE} in ${outDir}`);
  const packages = bundledPackages(JSON.parse(readFileSync(metaPath, 'utf8')) as Metafile, root);
  writeFileSync(join(outDir, LICENCES_FILE), formatLicences(packages));
  rmSync(metaPath);
  return packages;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outDir = process.argv[2];
  if (!outDir) throw new Error('usage: bundle-licences.ts <bundle output dir>');
  writeBundleLicences(outDir, fileURLToPath(new URL('..', import.meta.url)));
}
