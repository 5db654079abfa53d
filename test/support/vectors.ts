import { normalise } from '../../lib/core/semantic-index';

/**
 * Embedding-like test vectors, drawn from a seeded normal stream (seeded-normals.ts) so that the
 * tests and the benchmark measure recall on the same kind of set, the same on every run.
 */

/** A unit vector in a uniformly random direction. */
export function randomUnit(dimensions: number, random: () => number): Float32Array {
  return normalise(Array.from({ length: dimensions }, random));
}

/**
 * A unit vector of one topic: it leans towards the unit vector `centre` with weight `share`, so
 * two of them are at cosine ≈ `share`. The embeddings of one cache scope cluster like this, which
 * fills the LSH buckets unevenly (see lib/core/semantic-index.ts).
 */
export function clusteredUnit(centre: Float32Array, share: number, random: () => number): Float32Array {
  const along = Math.sqrt(share);
  const spread = Math.sqrt((1 - share) / centre.length);
  return normalise(Array.from(centre, (value) => along * value + spread * random()));
}

/**
 * A vector at cosine exactly `similarity` to the unit vector `original`: the original plus noise
 * orthogonal to it, scaled so the angle comes out as asked.
 */
export function nearDuplicate(original: Float32Array, similarity: number, random: () => number): Float32Array {
  const noise = Array.from({ length: original.length }, random);
  const along = noise.reduce((sum, value, i) => sum + value * original[i]!, 0);
  const orthogonal = normalise(noise.map((value, i) => value - along * original[i]!));
  const scale = Math.sqrt(1 - similarity * similarity);
  return Float32Array.from(original, (value, i) => similarity * value + scale * orthogonal[i]!);
}
