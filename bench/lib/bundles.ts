/**
 * Per function bundle (`.build/functions/<name>/index.mjs`): its size, its zip artifact's size, and
 * its cold import time: a fresh `node` process imports it and reports how long the import took
 * (the median of several processes). Lambda's runtime provides `awslambda` to streaming handlers,
 * so a stub is defined before the import.
 *
 * The size is what a cold start loads: index.mjs and the chunks it imports statically. The chunks
 * only `import()` reaches (a provider's adapter, the KMS client) load when first used, and count
 * in `totalBytes` alone.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './services';

/** The functions on the inference path (the ones the size and cold-import targets are about). */
export const INFERENCE_FUNCTIONS = ['chatCompletions', 'completions', 'embeddings', 'passthrough'];

export interface BundleResult {
  name: string;
  inference: boolean;
  /** index.mjs and the chunks it imports statically. */
  bytes: number;
  /** Every file of the bundle, the chunks loaded on demand included. */
  totalBytes: number;
  zipBytes?: number;
  /** Median time of `await import(bundle)` in a fresh process, ms. */
  importMs: number;
  /** Median wall time of the whole fresh process (node start-up + import + exit), ms. */
  processMs: number;
  importRunsMs: number[];
  error?: string;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const probe = [
  'globalThis.awslambda = { streamifyResponse: (f) => f, HttpResponseStream: { from: (s) => s } };',
  'const started = performance.now();',
  'await import(process.argv[1]);',
  "process.stdout.write('IMPORT_MS ' + (performance.now() - started) + '\\n');",
].join('\n');

interface Metafile {
  outputs: Record<string, { bytes: number; imports: { path: string; kind: string; external?: boolean }[] }>;
}

/** The bytes of index.mjs with the chunks it imports statically, and of every output file, from the build's metafile. */
function bundleBytes(directory: string): { eager: number; total: number } | undefined {
  const metaFile = path.join(directory, 'meta.json');
  if (!existsSync(metaFile)) return undefined;
  const { outputs } = JSON.parse(readFileSync(metaFile, 'utf8')) as Metafile;
  const entry = Object.keys(outputs).find((file) => path.basename(file) === 'index.mjs');
  if (!entry) return undefined;
  const loaded = new Set([entry]);
  const pending = [entry];
  while (pending.length > 0) {
    for (const { path: imported, kind, external } of outputs[pending.pop()!]?.imports ?? []) {
      if (kind !== 'import-statement' || external || loaded.has(imported)) continue;
      loaded.add(imported);
      pending.push(imported);
    }
  }
  const sum = (files: Iterable<string>) => [...files].reduce((total, file) => total + (outputs[file]?.bytes ?? 0), 0);
  return { eager: sum(loaded), total: sum(Object.keys(outputs).filter((file) => file.endsWith('.mjs'))) };
}

export function measureBundles(runs: number): BundleResult[] {
  const root = path.join(repoRoot, '.build', 'functions');
  if (!existsSync(root)) return [];
  const results: BundleResult[] = [];
  for (const name of readdirSync(root).sort()) {
    const file = path.join(root, name, 'index.mjs');
    if (!existsSync(file)) continue;
    const zip = path.join(repoRoot, '.build', 'artifacts', `${name}.zip`);
    const importRuns: number[] = [];
    const processRuns: number[] = [];
    let error: string | undefined;
    for (let i = 0; i < runs && !error; i++) {
      const started = performance.now();
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', probe, pathToFileURL(file).href], {
        cwd: repoRoot,
        encoding: 'utf8',
        // What Lambda sets; no credentials are needed to import a bundle.
        env: { ...process.env, AWS_REGION: process.env.AWS_REGION ?? 'us-east-1', NODE_OPTIONS: '' },
        timeout: 30_000,
      });
      const wall = performance.now() - started;
      const ms = Number(/IMPORT_MS (\S+)/.exec(child.stdout ?? '')?.[1]);
      if (child.status !== 0 || !Number.isFinite(ms)) error = `import failed (exit ${child.status}): ${(child.stderr ?? '').slice(-500)}`;
      else {
        importRuns.push(ms);
        processRuns.push(wall);
      }
    }
    const sizes = bundleBytes(path.join(root, name)) ?? { eager: statSync(file).size, total: statSync(file).size };
    results.push({
      name,
      inference: INFERENCE_FUNCTIONS.includes(name),
      bytes: sizes.eager,
      totalBytes: sizes.total,
      zipBytes: existsSync(zip) ? statSync(zip).size : undefined,
      importMs: median(importRuns),
      processMs: median(processRuns),
      importRunsMs: importRuns.map((ms) => Math.round(ms * 10) / 10),
      error,
    });
  }
  return results;
}
