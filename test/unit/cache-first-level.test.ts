import { describe, expect, it } from 'vitest';
import { FirstLevelCache } from '../../lib/cache/first-level';

const entry = (size: number, expiresAt: number) => ({ body: Buffer.alloc(size), expiresAt });

describe('FirstLevelCache', () => {
  it('serves an entry until its absolute expiry, to the millisecond', () => {
    const level = new FirstLevelCache({ maxBytes: 1000, freshnessMs: 5000 });
    level.set('a', entry(10, 1_500), 1_000);
    expect(level.get('a', 1_499)).toBeDefined();
    expect(level.get('a', 1_500)).toBeUndefined();
  });

  it('holds an entry at most freshnessMs, so another process’s refresh shows within that time', () => {
    const level = new FirstLevelCache({ maxBytes: 1000, freshnessMs: 5000 });
    level.set('a', entry(10, 100_000), 1_000);
    expect(level.get('a', 5_999)).toBeDefined();
    expect(level.get('a', 6_000)).toBeUndefined();
  });

  it('stays within its byte bound, dropping the oldest first, and never holds one oversized body', () => {
    const level = new FirstLevelCache({ maxBytes: 800, freshnessMs: 5000 });
    for (const id of ['a', 'b', 'c', 'd', 'e']) level.set(id, entry(100, 10_000), 0);
    level.set('f', entry(100, 10_000), 0);
    level.set('g', entry(100, 10_000), 0);
    level.set('h', entry(100, 10_000), 0);
    level.set('i', entry(100, 10_000), 0);
    expect(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].filter((id) => level.get(id, 1))).toEqual(['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']);
    level.set('huge', entry(101, 10_000), 0);
    expect(level.get('huge', 1)).toBeUndefined();
  });

  it('replaces an entry set again, counting its bytes once', () => {
    const level = new FirstLevelCache({ maxBytes: 200, freshnessMs: 5000 });
    level.set('a', entry(25, 10_000), 0);
    level.set('a', entry(25, 20_000), 0);
    level.set('b', entry(25, 10_000), 0);
    expect(level.get('a', 1)?.expiresAt).toBe(20_000);
    expect(level.get('b', 1)).toBeDefined();
  });
});
