/**
 * Semantic lookup cost against cache size: one scope of a semantic cache filled to each size in
 * turn (1,000, 10,000, 100,000 entries; quick mode stops at 10,000), then asked near-duplicate and
 * unrelated queries, one after another. A lookup is what the gateway does for one request: the
 * query's LSH signatures, one bounded Query per LSH table, the exact cosine over what came back.
 *
 * The lookups run in this process, so its CPU (process.cpuUsage) is the gateway's share; DynamoDB
 * is an emulator in a process of its own, whose CPU is read from /proc and reported beside it.
 * Items read are the items the Queries returned. The claim measured: a lookup reads at most
 * `maxCandidatesPerLookup` items and costs about the same CPU however large the scope grows.
 */
import { bestMatch, defaultPerBucketLimit, maxCandidatesPerLookup, signatures } from '../lib/core/semantic-index';
import { findSemanticCandidatesWithReads } from '../lib/store/semantic-entries';
import { cpuSeconds } from './lib/proc';
import { fillScope } from './lib/semantic-fill';
import { nearDuplicateCosine, newestWindow, SeededScope, type Query } from './lib/semantic-scope';
import { startSemanticStore } from './lib/semantic-store';
import { delta, perRequestUs, waitUntilIdle } from './runner';

/**
 * 256 dimensions (an embedding model's shortened output, e.g. OpenAI's `dimensions: 256`) rather
 * than 1,536: the emulator stores a 1,536-dimension million-item scope at half the rate, minutes
 * more per run. A lookup's CPU grows with the dimensions; how it grows with the scope does not.
 */
export const semanticDimensions = 256;
/** The workspace setting's default (lib/control/workspaces-route.ts). */
const similarityThreshold = 0.95;
/** Lookups before each size's measured ones, so the JIT and the emulator's sockets are warm. */
const warmupLookups = 20;

export interface SemanticLookupSettings {
  /** Scope sizes, ascending; the scope grows from one to the next. */
  sizes: number[];
  /** Queries of each kind per size: near-duplicates of any entry, of a new entry, and unrelated ones. */
  queriesPerKind: number;
}

export interface SemanticSizeResult {
  entries: number;
  /** Adding the entries since the previous size: seconds, and entries a second. */
  fillSec: number;
  fillEntriesPerSec: number;
  lookups: number;
  itemsRead: { mean: number; max: number };
  /** Distinct live entries compared with the query (an entry found in several tables counts once). */
  candidates: { mean: number; max: number };
  cpuUsPerLookup?: number;
  emulatorUsPerLookup?: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  /** Share of near-duplicate queries whose stored twin was the best match, of any entry and of the newest ones. */
  recall: { all: number; newest: number };
  /** Unrelated queries answered with some entry anyway (none should be). */
  unrelatedMatched: number;
}

export interface SemanticLookupResult {
  dimensions: number;
  similarityThreshold: number;
  nearDuplicateCosine: typeof nearDuplicateCosine;
  newestWindow: number;
  perBucketLimit: number;
  maxItemsPerLookup: number;
  queriesPerKind: number;
  sizes: SemanticSizeResult[];
}

export async function measureSemanticLookup(settings: SemanticLookupSettings, workDir: string, log: (line: string) => void): Promise<SemanticLookupResult> {
  const { sizes, queriesPerKind } = settings;
  log(
    `Semantic lookup cost against cache size: one scope of ${sizes.map((size) => size.toLocaleString('en-US')).join(', ')} entries (${semanticDimensions} dimensions), ${queriesPerKind * 3} lookups each …`,
  );
  const data = new SeededScope(semanticDimensions);
  const twins = sizes.map((size) => data.pickTwins(size, queriesPerKind));
  const store = await startSemanticStore(workDir);
  try {
    const results: SemanticSizeResult[] = [];
    let filled = 0;
    for (const [i, size] of sizes.entries()) {
      const fill = await grow(data, filled, size, log);
      filled = size;
      // Compaction after a large fill would otherwise run under the first lookups.
      if (store.service.pid !== undefined) await waitUntilIdle([store.service.pid]);
      const result = await measureLookups(data, data.queries(twins[i]!), store.service.pid);
      results.push({ entries: size, ...fill, ...result });
      log(
        `  ${size.toLocaleString('en-US')} entries: ${result.itemsRead.mean.toFixed(1)} items read per lookup (max ${result.itemsRead.max}), ` +
          `${result.cpuUsPerLookup?.toFixed(0) ?? '–'} µs CPU, p50 ${result.latencyMs.p50.toFixed(2)} ms, recall ${result.recall.all.toFixed(3)} (newest ${result.recall.newest.toFixed(3)})`,
      );
    }
    return {
      dimensions: semanticDimensions,
      similarityThreshold,
      nearDuplicateCosine,
      newestWindow,
      perBucketLimit: defaultPerBucketLimit,
      maxItemsPerLookup: maxCandidatesPerLookup,
      queriesPerKind,
      sizes: results,
    };
  } finally {
    await store.close();
  }
}

async function grow(
  data: SeededScope,
  from: number,
  to: number,
  log: (line: string) => void,
): Promise<Pick<SemanticSizeResult, 'fillSec' | 'fillEntriesPerSec'>> {
  const started = performance.now();
  const step = Math.max(10_000, Math.round((to - from) / 5));
  let reported = 0;
  await fillScope({
    workspaceId: data.workspaceId,
    scope: data.scope,
    from,
    to,
    entry: (index) => data.entry(index),
    progress: (written) => {
      if (written - reported < step || written === to - from) return;
      reported = written;
      log(
        `  … ${(from + written).toLocaleString('en-US')} of ${to.toLocaleString('en-US')} entries stored (${((performance.now() - started) / 1000).toFixed(0)} s)`,
      );
    },
  });
  const fillSec = (performance.now() - started) / 1000;
  log(
    `  filled ${from.toLocaleString('en-US')} → ${to.toLocaleString('en-US')} entries (${((to - from) * 10).toLocaleString('en-US')} items) in ${fillSec.toFixed(1)} s`,
  );
  return { fillSec, fillEntriesPerSec: (to - from) / fillSec };
}

type LookupMeasurement = Omit<SemanticSizeResult, 'entries' | 'fillSec' | 'fillEntriesPerSec'>;

async function measureLookups(data: SeededScope, queries: Query[], emulatorPid: number | undefined): Promise<LookupMeasurement> {
  for (let i = 0; i < warmupLookups; i++) await lookUp(data, data.unrelated());

  const itemsRead: number[] = [];
  const candidates: number[] = [];
  const latencies: number[] = [];
  const found = { all: 0, newest: 0 };
  let unrelatedMatched = 0;
  const emulatorBefore = cpuSeconds(emulatorPid);
  const cpuBefore = process.cpuUsage();
  for (const query of queries) {
    const started = performance.now();
    const lookup = await lookUp(data, query.vector);
    latencies.push(performance.now() - started);
    itemsRead.push(lookup.itemsRead);
    candidates.push(lookup.candidates);
    if (query.kind === 'unrelated') unrelatedMatched += lookup.matchId === undefined ? 0 : 1;
    else if (lookup.matchId === query.twinId) found[query.kind === 'near-duplicate' ? 'all' : 'newest']++;
  }
  const cpu = process.cpuUsage(cpuBefore);
  const emulatorAfter = cpuSeconds(emulatorPid);

  const count = (kind: Query['kind']) => queries.filter((query) => query.kind === kind).length;
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (share: number) => sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!;
  return {
    lookups: queries.length,
    itemsRead: { mean: mean(itemsRead), max: Math.max(...itemsRead) },
    candidates: { mean: mean(candidates), max: Math.max(...candidates) },
    cpuUsPerLookup: perRequestUs((cpu.user + cpu.system) / 1e6, queries.length),
    emulatorUsPerLookup: perRequestUs(delta(emulatorAfter, emulatorBefore), queries.length),
    latencyMs: { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted.at(-1)! },
    recall: { all: found.all / count('near-duplicate'), newest: found.newest / count('near-duplicate of a new entry') },
    unrelatedMatched,
  };
}

/** One lookup, as the gateway makes it for a request. */
async function lookUp(data: SeededScope, vector: Float32Array): Promise<{ itemsRead: number; candidates: number; matchId?: string }> {
  const lookup = await findSemanticCandidatesWithReads(data.workspaceId, data.scope, signatures(vector));
  const match = bestMatch(vector, lookup.candidates, similarityThreshold);
  return { itemsRead: lookup.itemsRead, candidates: lookup.candidates.length, matchId: match?.candidate.id };
}

function mean(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}
