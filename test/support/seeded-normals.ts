import { seededUniform } from '../../lib/core/seeded-random';

/** A seeded stream of standard normal numbers, so test vectors (and measured recall) are the same on every run. */
export function seededNormals(seed: number): () => number {
  const uniform = seededUniform(seed);
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}
