/**
 * The semantic index's recall on test sets of random and clustered vectors: a measurement that
 * takes seconds, in a file of its own so the unit run spreads it over the cores.
 */
import { describe, expect, it } from 'vitest';
import { bestMatch, defaultPerBucketLimit, maxCandidatesPerLookup } from '../../../lib/core/semantic-index';
import { measure, report } from '../../support/lsh-recall';
import { seededNormals } from '../../support/seeded-normals';
import { clusteredUnit, nearDuplicate, randomUnit } from '../../support/vectors';

describe('semantic index: recall on a test set', () => {
  const dimensions = 1536;
  const count = 2000;
  const random = seededNormals(20_261_125);
  const originals = Array.from({ length: count }, () => randomUnit(dimensions, random));

  it('finds the original of near-duplicates at cosine 0.96–0.99 in a shared bucket', () => {
    const queries = originals.map((original, i) => nearDuplicate(original, 0.96 + (0.03 * i) / (count - 1), random));
    const measured = measure(originals, queries);
    report(`${count} vectors × ${dimensions} dims, near-duplicates at cosine 0.96–0.99`, measured);
    expect(measured.recall).toBeGreaterThanOrEqual(0.97);
    expect(measured.falseCandidateRate).toBeLessThan(0.012);
  });

  it('finds at least 95% of them at the default threshold itself, cosine 0.95', () => {
    const queries = originals.map((original) => nearDuplicate(original, 0.95, random));
    const measured = measure(originals, queries);
    report(`${count} vectors × ${dimensions} dims, near-duplicates at cosine 0.95`, measured);
    expect(measured.recall).toBeGreaterThanOrEqual(0.95);
  });

  it('keeps finding near-duplicates in a scope whose embeddings cluster, reading a bounded number of items', () => {
    // One topic: every vector leans towards a shared centre, so two of them are at cosine ≈ 0.3.
    const centre = randomUnit(dimensions, random);
    const clustered = Array.from({ length: 4000 }, () => clusteredUnit(centre, 0.3, random));
    const queries = clustered.map((original) => nearDuplicate(original, 0.95, random));
    const measured = measure(clustered, queries, defaultPerBucketLimit);
    report(
      `4000 clustered vectors (pairwise cosine ≈ 0.3) × ${dimensions} dims, near-duplicates at cosine 0.95, ${defaultPerBucketLimit} items read per bucket`,
      measured,
    );
    expect(measured.recall).toBeGreaterThanOrEqual(0.93);
    expect(measured.meanCandidates).toBeLessThanOrEqual(maxCandidatesPerLookup);
    // 4,000 lookups in 1,536 dimensions: seconds of pure CPU, many more on a busy machine.
  }, 60_000);

  it('rarely puts an unrelated vector in a shared bucket, and the exact cosine rejects it', () => {
    const queries = Array.from({ length: 500 }, () => randomUnit(dimensions, random));
    const measured = measure(originals, queries);
    // Index i of a random query is no relative of original i; "recall" here is the chance meeting.
    expect(measured.recall).toBeLessThan(0.02);
    expect(measured.falseCandidateRate).toBeLessThan(0.012);
    for (const query of queries.slice(0, 50))
      expect(
        bestMatch(
          query,
          originals.map((vector) => ({ vector })),
          0.95,
        ),
      ).toBeUndefined();
  });
});
