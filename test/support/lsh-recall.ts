/**
 * How well the LSH index finds near-duplicates: the measurement the semantic index's recall tests
 * make, on vectors stored in buckets as the store keeps them.
 */
import { lshBits, lshTables, signatures } from '../../lib/core/semantic-index';

export interface Measurement {
  recall: number;
  /** Share of the other stored vectors that come back as candidates of a query. */
  falseCandidateRate: number;
  meanCandidates: number;
  largestBucket: number;
}

/**
 * Stores `originals` in LSH buckets, oldest first, and looks each near-duplicate up: recall is the
 * share of queries whose own original shares at least one bucket with it. With `perBucketLimit`, a
 * lookup sees only that many of a bucket's newest entries, as the store's Query does.
 */
export function measure(originals: Float32Array[], queries: Float32Array[], perBucketLimit = Infinity): Measurement {
  const buckets = Array.from({ length: lshTables }, () => new Map<string, number[]>());
  originals.forEach((vector, index) => {
    signatures(vector).forEach((signature, table) => {
      const bucket = buckets[table]!.get(signature) ?? [];
      bucket.push(index);
      buckets[table]!.set(signature, bucket);
    });
  });
  let found = 0;
  let falseCandidates = 0;
  let candidates = 0;
  queries.forEach((query, index) => {
    const seen = new Set<number>();
    signatures(query).forEach((signature, table) => {
      const bucket = buckets[table]!.get(signature) ?? [];
      for (const candidate of bucket.slice(Math.max(0, bucket.length - perBucketLimit))) seen.add(candidate);
    });
    if (seen.has(index)) found++;
    candidates += seen.size;
    falseCandidates += seen.size - (seen.has(index) ? 1 : 0);
  });
  const largestBucket = Math.max(...buckets.flatMap((table) => [...table.values()].map((bucket) => bucket.length)));
  return {
    recall: found / queries.length,
    falseCandidateRate: falseCandidates / (queries.length * (originals.length - 1)),
    meanCandidates: candidates / queries.length,
    largestBucket,
  };
}

export function report(label: string, { recall, falseCandidateRate, meanCandidates, largestBucket }: Measurement): void {
  console.log(
    `${label} (${lshTables} tables × ${lshBits} bits): recall ${recall.toFixed(4)}, false candidate rate ${(falseCandidateRate * 100).toFixed(3)}%, ` +
      `${meanCandidates.toFixed(2)} candidates per lookup on average, largest bucket ${largestBucket}`,
  );
}
