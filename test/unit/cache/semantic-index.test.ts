import { describe, expect, it } from 'vitest';
import {
  bestMatch,
  cosine,
  decodeVector,
  defaultPerBucketLimit,
  encodeVector,
  lshBits,
  lshTables,
  maxCandidatesPerLookup,
  signatures,
} from '../../../lib/core/semantic-index';
import { measure, report } from '../../support/lsh-recall';
import { seededNormals } from '../../support/seeded-normals';
import { nearDuplicate, randomUnit } from '../../support/vectors';

describe('semantic index: signatures', () => {
  it('gives one signature of the same width per table, the same on every call and for any scale', () => {
    const vector = randomUnit(1536, seededNormals(1));
    const first = signatures(vector);
    expect(first).toHaveLength(lshTables);
    for (const signature of first) expect(signature).toMatch(new RegExp(`^[0-9a-f]{${Math.ceil(lshBits / 4)}}$`));
    expect(signatures(Array.from(vector))).toEqual(first);
    expect(signatures(vector.map((value) => value * 37.5))).toEqual(first);
  });

  it('keeps the hyperplanes every stored entry was bucketed with (a change would orphan them)', () => {
    const vector = Array.from({ length: 1536 }, (_, i) => Math.sin(i + 1));
    // Pinned from this implementation: a different value means other hyperplanes, so entries
    // stored before the change would no longer be found.
    expect(signatures(vector)).toMatchInlineSnapshot(`
      [
        "3c5",
        "daa",
        "7eb",
        "17a",
        "228",
        "52b",
        "102",
        "b08",
        "7d7",
        "4ee",
      ]
    `);
  });

  it.each([256, 768, 3072])('works in %i dimensions', (dimensions) => {
    const random = seededNormals(dimensions);
    const originals = Array.from({ length: 400 }, () => randomUnit(dimensions, random));
    const queries = originals.map((original, i) => nearDuplicate(original, 0.96 + (0.03 * i) / 399, random));
    const measured = measure(originals, queries);
    report(`400 vectors × ${dimensions} dims, near-duplicates at cosine 0.96–0.99`, measured);
    expect(measured.recall).toBeGreaterThanOrEqual(0.95);
    expect(
      bestMatch(
        queries[7]!,
        originals.map((vector, id) => ({ id, vector })),
        0.95,
      )?.candidate.id,
    ).toBe(7);
  });

  it('refuses vectors no direction can be read from', () => {
    expect(() => signatures([])).toThrow(/dimensions/);
    expect(() => signatures([0, 0, 0])).toThrow(/length 0/);
    expect(() => signatures([1, Number.NaN])).toThrow(/finite/);
    expect(() => signatures(new Float32Array(9000).fill(1))).toThrow(/dimensions/);
  });
});

describe('semantic index: similarity and storage', () => {
  it('computes cosine similarity whatever the vectors’ lengths', () => {
    expect(cosine([1, 0], [0, 1])).toBe(0);
    expect(cosine([2, 0], [5, 0])).toBeCloseTo(1, 12);
    expect(cosine([1, 1], [-1, -1])).toBeCloseTo(-1, 12);
    expect(cosine([1, 2], [1, 2, 3])).toBe(0);
    expect(cosine([0, 0], [1, 0])).toBe(0);
  });

  it('picks the most similar candidate at or above the threshold, and none below it', () => {
    const random = seededNormals(7);
    const query = randomUnit(256, random);
    const candidates = [
      { id: 'far', vector: randomUnit(256, random) },
      { id: 'close', vector: nearDuplicate(query, 0.96, random) },
      { id: 'closer', vector: nearDuplicate(query, 0.98, random) },
      { id: 'other model', vector: randomUnit(128, random) },
    ];
    const match = bestMatch(query, candidates, 0.95);
    expect(match?.candidate.id).toBe('closer');
    expect(match?.similarity).toBeCloseTo(0.98, 5);
    expect(bestMatch(query, candidates, 0.99)).toBeUndefined();
    expect(bestMatch(query, [], 0.5)).toBeUndefined();
    const exact = bestMatch(query, [{ vector: nearDuplicate(query, 0.95, random) }], 0.95 - 1e-6);
    expect(exact).toBeDefined();
  });

  it('round-trips a vector through base64 of little-endian float32, 4 bytes a component', () => {
    const vector = randomUnit(1536, seededNormals(3));
    const text = encodeVector(vector);
    expect(Buffer.from(text, 'base64')).toHaveLength(1536 * 4);
    expect(decodeVector(text)).toEqual(vector);
    expect(encodeVector([1])).toBe(Buffer.from([0, 0, 0x80, 0x3f]).toString('base64'));
    expect(Array.from(decodeVector(encodeVector([0.1, -2.5])))).toEqual([Math.fround(0.1), -2.5]);
  });

  it('refuses stored text it cannot have written', () => {
    expect(() => decodeVector('')).toThrow(/dimensions/);
    expect(() => decodeVector('not base64!')).toThrow(/base64/);
    expect(() => decodeVector(Buffer.from([1, 2, 3]).toString('base64'))).toThrow(/float32/);
    // Damage Buffer would decode past: a skipped character, and base64url's alphabet.
    const text = encodeVector([0.25, -1, 3.5]);
    expect(() => decodeVector(`${text.slice(0, 4)} ${text.slice(4)}`)).toThrow(/base64/);
    expect(() => decodeVector(`${text.slice(0, -2)}\n${text.slice(-2)}`)).toThrow(/base64/);
    // 0.99999994 is the float32 of bytes ff ff 7f 3f, whose base64 is `//9/Pw==`.
    const slashes = encodeVector([0.99999994]);
    expect(slashes).toBe('//9/Pw==');
    expect(() => decodeVector(slashes.replaceAll('/', '_'))).toThrow(/base64/);
  });

  it('bounds the items a lookup reads', () => {
    expect(maxCandidatesPerLookup).toBe(lshTables * defaultPerBucketLimit);
  });
});
