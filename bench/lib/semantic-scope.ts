/**
 * The semantic lookup stage's data: one cache scope of seeded embeddings of one topic, and the
 * queries asked of it. The same seeds give the same vectors on every run, so the sizes and the
 * runs differ only in how many entries there are.
 */
import { createHash } from 'node:crypto';
import { normalise } from '../../lib/core/semantic-index';
import { seededUniform } from '../../lib/core/seeded-random';
import { newId } from '../../lib/core/ids';
import type { SemanticEntry } from '../../lib/store/semantic-entries';
import { seededNormals } from '../../test/support/seeded-normals';
import { clusteredUnit, nearDuplicate } from '../../test/support/vectors';

/** A query and, for a near-duplicate, the stored entry it should find. */
export interface Query {
  kind: 'near-duplicate' | 'near-duplicate of a new entry' | 'unrelated';
  vector: Float32Array;
  twinId?: string;
}

/** Pairwise cosine of a scope's embeddings: one system prompt, one topic (as semantic-index.ts measures recall on). */
const clusterShare = 0.3;
/** Near-duplicates are spread over this range of cosine to their twin, all above the default threshold. */
export const nearDuplicateCosine = { from: 0.96, to: 0.99 };
/** "New" entries: the newest this many of the scope, what a cache mostly answers from. */
export const newestWindow = 1_000;
const day = 86_400_000;

export class SeededScope {
  readonly workspaceId = 'ws_bench_semantic';
  /** A scope is a hash of what the requests share (lib/cache): 64 hex digits, as there. */
  readonly scope = createHash('sha256').update('semantic lookup benchmark').digest('hex');
  private readonly entryNormals = seededNormals(0x5ca1e);
  private readonly queryNormals = seededNormals(0x9e7);
  private readonly picks = seededUniform(0x71c);
  private readonly centre: Float32Array;
  /** Entries are one millisecond apart, so a bucket's newest-first order is the fill order exactly. */
  private readonly clock = Date.now();
  private readonly expiresAt = this.clock + day;
  private made = 0;
  /** The entries near-duplicate queries are made of, kept as they are made. */
  private readonly twins = new Map<number, { id: string; vector: Float32Array } | undefined>();

  constructor(readonly dimensions: number) {
    this.centre = normalise(Array.from({ length: dimensions }, this.entryNormals));
  }

  /** The entry at `index`; called for every index in order (the vectors come from one stream). */
  entry(index: number): SemanticEntry {
    if (index !== this.made) throw new Error(`entries are made in order: asked for ${index}, next is ${this.made}`);
    this.made++;
    const vector = clusteredUnit(this.centre, clusterShare, this.entryNormals);
    const id = newId('sem', this.clock + index);
    if (this.twins.has(index)) this.twins.set(index, { id, vector });
    // An answer's key is a SHA-256 in hex; its length, not its value, matters here.
    return { id, vector, answerRef: { partition: 'default', key: index.toString(16).padStart(64, '0') }, expiresAt: this.expiresAt };
  }

  /**
   * Picks, before the scope is filled, the twins of the near-duplicate queries to ask once it holds
   * `size` entries: `count` from the whole scope and `count` from its newest entries.
   */
  pickTwins(size: number, count: number): { all: number[]; newest: number[] } {
    if (this.made > 0) throw new Error('twins are picked before the scope is filled, so their vectors are kept');
    const all = this.pick(0, size, count);
    const newest = this.pick(Math.max(0, size - newestWindow), size, count);
    for (const index of [...all, ...newest]) this.twins.set(index, undefined);
    return { all, newest };
  }

  /** Near-duplicates of the picked twins (made by now), then as many unrelated queries of the same topic. */
  queries(twins: { all: number[]; newest: number[] }): Query[] {
    const near = (indexes: number[], kind: Query['kind']) =>
      indexes.map((index, i): Query => {
        const twin = this.twins.get(index);
        if (!twin) throw new Error(`entry ${index} has not been made yet`);
        const { from, to } = nearDuplicateCosine;
        const similarity = from + ((to - from) * i) / Math.max(1, indexes.length - 1);
        return { kind, vector: nearDuplicate(twin.vector, similarity, this.queryNormals), twinId: twin.id };
      });
    const unrelated = Array.from({ length: twins.all.length }, (): Query => ({ kind: 'unrelated', vector: this.unrelated() }));
    return interleave([near(twins.all, 'near-duplicate'), near(twins.newest, 'near-duplicate of a new entry'), unrelated]);
  }

  /** A new question of the same topic: close to no stored entry, but in the topic's busy buckets. */
  unrelated(): Float32Array {
    return clusteredUnit(this.centre, clusterShare, this.queryNormals);
  }

  /** `count` distinct indexes in [from, to). */
  private pick(from: number, to: number, count: number): number[] {
    if (to - from < count) throw new Error(`cannot pick ${count} of ${to - from} entries`);
    const picked = new Set<number>();
    while (picked.size < count) picked.add(from + Math.floor(this.picks() * (to - from)));
    return [...picked];
  }
}

/** One of each list in turn, so no kind of query runs only while the process is warm or cold. */
function interleave<T>(lists: T[][]): T[] {
  const out: T[] = [];
  for (let i = 0; i < Math.max(...lists.map((list) => list.length)); i++) for (const list of lists) if (i < list.length) out.push(list[i]!);
  return out;
}
