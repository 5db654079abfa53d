/**
 * Per function bundle (`.build/functions/<name>/index.mjs`): its size, its zip artifact's size, and
 * its cold import time: a fresh `node` process imports it and reports how long the import took
 * (the median of several processes). Lambda's runtime provides `awslambda` to streaming handlers,
 * so a stub is defined before the import.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './services';

/** The functions on the inference path (the ones the size and cold-import targets are about). */
export const INFERENCE_FUNCTIONS = ['chatCompletions', 'completions', 'embeddings', 'passthrough'];

export interface BundleResult {
  name: string;
  inference: boolean;
  bytes: number;
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
    results.push({
      name,
      inference: INFERENCE_FUNCTIONS.includes(name),
      bytes: statSync(file).size,
      zipBytes: existsSync(zip) ? statSync(zip).size : undefined,
      importMs: median(importRuns),
      processMs: median(processRuns),
      importRunsMs: importRuns.map((ms) => Math.round(ms * 10) / 10),
      error,
    });
  }
  return results;
}
