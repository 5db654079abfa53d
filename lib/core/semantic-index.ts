/**
 * The semantic cache's index: random-hyperplane LSH over embeddings, so a lookup reads a few
 * DynamoDB buckets rather than every stored vector, then compares the query with each candidate.
 *
 * Each of `lshTables` tables draws `lshBits` random hyperplanes; a vector's signature in a table is
 * the side of each hyperplane it falls on. Two vectors at angle θ agree on one hyperplane with
 * probability p = 1 − θ/π, on a table's signature with p^bits, and share at least one of the
 * tables' buckets with 1 − (1 − p^bits)^tables. At cosine 0.95 (θ ≈ 18.2°, p ≈ 0.899) that is
 * ≈ 0.962 for 10 tables × 12 bits; at cosine 0.96 ≈ 0.98. An unrelated vector (θ ≈ 90°) shares a
 * given table's bucket with probability 2^-12, so about 1 in 400 stored vectors comes back as a
 * false candidate, which the exact cosine inside the candidate set throws out.
 *
 * 8 × 10 recalls as well when vectors spread evenly over the sphere, but the embeddings of one
 * scope cluster (one system prompt, one topic), and then its 1,024 buckets per table fill
 * unevenly: with the per-bucket read limit, a scope of 4,000 entries at pairwise cosine ≈ 0.3 kept
 * 0.89 of its near-duplicates with 8 × 10 and 0.95 with 10 × 12. Fewer bits would lose more that way; more
 * bits cost recall that only more tables buy back, each another item written per entry and
 * another Query per lookup.
 *
 * Pure: no I/O. Hyperplanes depend only on the dimension, the table and `lshSeed`, so every Lambda
 * computes the same signatures without sharing state; changing any of the three constants moves
 * every vector to new buckets (stored entries become unreachable until they expire).
 */

import { seededUniform } from './seeded-random';

export const lshTables = 10;
/** Bits per signature: a multiple of 4 (`signatures` computes four hyperplanes at a time, and writes hex). */
export const lshBits = 12;
export const lshSeed = 0x5eed_1a5e;

/**
 * Items read per LSH bucket at most (newest first). A lookup reads at most
 * `lshTables × perBucketLimit` items (`maxCandidatesPerLookup`, 160) however many entries a scope
 * holds. Once a scope's busiest buckets hold more than this, its oldest entries stop being found:
 * for embeddings that cluster that starts at a few thousand entries per scope, the point to move
 * the scope to a vector store.
 */
export const defaultPerBucketLimit = 16;
export const maxCandidatesPerLookup = lshTables * defaultPerBucketLimit;

/** Embedding models answer in at most a few thousand dimensions; a bound keeps hyperplane memory bounded too. */
const maxDimensions = 8192;

export type Vector = Float32Array | readonly number[];

/** The bucket signature of `vector` in each table, table 0 first: `bits` sign bits as hex. */
export function signatures(vector: Vector): string[] {
  const unit = normalise(vector);
  const planes = hyperplanes(unit.length);
  const width = Math.ceil(lshBits / 4);
  const n = unit.length;
  return planes.map((table) => {
    let bits = 0;
    // Four hyperplanes per pass over the vector: four independent sums keep the CPU's adders busy
    // where one waits on the last addition. Each sum still adds its terms in index order, so every
    // signature is bit for bit what one dot product at a time gives (stored entries stay found).
    for (let bit = 0; bit < lshBits; bit += 4) {
      const o0 = bit * n;
      const o1 = o0 + n;
      const o2 = o1 + n;
      const o3 = o2 + n;
      let d0 = 0;
      let d1 = 0;
      let d2 = 0;
      let d3 = 0;
      for (let i = 0; i < n; i++) {
        const u = unit[i]!;
        d0 += table[o0 + i]! * u;
        d1 += table[o1 + i]! * u;
        d2 += table[o2 + i]! * u;
        d3 += table[o3 + i]! * u;
      }
      // Ties (a sum exactly 0) need one fixed side so that every Lambda agrees.
      if (d0 >= 0) bits |= 1 << bit;
      if (d1 >= 0) bits |= 1 << (bit + 1);
      if (d2 >= 0) bits |= 1 << (bit + 2);
      if (d3 >= 0) bits |= 1 << (bit + 3);
    }
    return bits.toString(16).padStart(width, '0');
  });
}

/** Cosine similarity; 0 when either vector has no length or the dimensions differ. */
export function cosine(a: Vector, b: Vector): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let dot = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    aa += x * x;
    bb += y * y;
  }
  if (aa === 0 || bb === 0) return 0;
  return dot / Math.sqrt(aa * bb);
}

/**
 * The candidates whose similarity to `query` is at least `threshold`, most similar first. A
 * candidate of another dimension (an entry embedded by another model) never matches.
 */
export function matchesAbove<C extends { vector: Vector }>(
  query: Vector,
  candidates: readonly C[],
  threshold: number,
): Array<{ candidate: C; similarity: number }> {
  const matches: Array<{ candidate: C; similarity: number }> = [];
  for (const candidate of candidates) {
    if (candidate.vector.length !== query.length) continue;
    const similarity = cosine(query, candidate.vector);
    if (similarity >= threshold) matches.push({ candidate, similarity });
  }
  return matches.sort((a, b) => b.similarity - a.similarity);
}

/** The candidate most similar to `query` at or above `threshold`, with that similarity; undefined when none reaches it. */
export function bestMatch<C extends { vector: Vector }>(
  query: Vector,
  candidates: readonly C[],
  threshold: number,
): { candidate: C; similarity: number } | undefined {
  return matchesAbove(query, candidates, threshold)[0];
}

/** The vector scaled to length 1, as float32; throws for a vector no direction can be read from. */
export function normalise(vector: Vector): Float32Array {
  checkDimensions(vector.length);
  let sum = 0;
  for (let i = 0; i < vector.length; i++) {
    const value = vector[i]!;
    if (!Number.isFinite(value)) throw new Error(`Embedding component ${i} is ${value}, not a finite number.`);
    sum += value * value;
  }
  if (sum === 0) throw new Error('An embedding of length 0 has no direction to compare.');
  const scale = 1 / Math.sqrt(sum);
  const unit = new Float32Array(vector.length);
  for (let i = 0; i < vector.length; i++) unit[i] = vector[i]! * scale;
  return unit;
}

/**
 * The vector as base64 of its float32 components, little-endian whatever the host: 4 bytes a
 * component (≈ 8 KB of text for 1,536 dimensions), a third of what decimal JSON takes.
 */
export function encodeVector(vector: Vector): string {
  checkDimensions(vector.length);
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < vector.length; i++) view.setFloat32(i * 4, vector[i]!, true);
  return Buffer.from(bytes).toString('base64');
}

/** Float32Array reads the platform's byte order; stored vectors are little-endian, as Lambda's CPUs are. */
const littleEndian = new Uint8Array(new Float32Array([1]).buffer)[3] === 0x3f;

/** The vector `encodeVector` wrote; throws for text it cannot have written. */
export function decodeVector(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  // Buffer skips characters that are not base64, so a damaged value would decode to another
  // vector: only text that is exactly what encoding the bytes gives is one (a regex over the text
  // cost several times the decoding).
  if (bytes.length % 4 !== 0 || bytes.toString('base64') !== text) throw new Error('A stored vector is not the base64 of whole float32 components.');
  checkDimensions(bytes.length / 4);
  if (littleEndian) return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const vector = new Float32Array(bytes.length / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = view.getFloat32(i * 4, true);
  return vector;
}

function checkDimensions(count: number): void {
  if (!Number.isInteger(count) || count < 1 || count > maxDimensions)
    throw new Error(`An embedding has ${count} dimensions; 1 to ${maxDimensions} are supported.`);
}

// Drawing 80 hyperplanes of a few thousand components takes milliseconds; a warm Lambda keeps them.
const planesByDimension = new Map<number, Float32Array[]>();

/** Per table, `lshBits` Gaussian hyperplanes of `dimensions` components, one after another. */
function hyperplanes(dimensions: number): Float32Array[] {
  let planes = planesByDimension.get(dimensions);
  if (!planes) {
    planes = [];
    for (let table = 0; table < lshTables; table++) {
      const random = gaussian(mix(mix(lshSeed ^ dimensions) ^ Math.imul(table + 1, 0x9e3779b9)));
      const values = new Float32Array(lshBits * dimensions);
      for (let i = 0; i < values.length; i++) values[i] = random();
      planes.push(values);
    }
    planesByDimension.set(dimensions, planes);
  }
  return planes;
}

/** A 32-bit finaliser (MurmurHash3's): nearby seeds (table 1, table 2) give unrelated streams. */
function mix(value: number): number {
  let h = value >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Standard normal numbers from a seeded mulberry32 stream, by Box–Muller. Gaussian components make
 * a hyperplane's direction uniform on the sphere, which the p = 1 − θ/π collision rate relies on;
 * the stream is specified here, not taken from Math.random, so it cannot differ between runtimes.
 */
function gaussian(seed: number): () => number {
  const uniform = seededUniform(seed);
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const value = spare;
      spare = undefined;
      return value;
    }
    // 1 − u keeps the logarithm's argument in (0, 1].
    const radius = Math.sqrt(-2 * Math.log(1 - uniform()));
    const angle = 2 * Math.PI * uniform();
    spare = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  };
}
