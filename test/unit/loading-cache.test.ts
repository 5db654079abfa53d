import { afterEach, describe, expect, it, vi } from 'vitest';
import { LoadingCache } from '../../lib/store/loading-cache';

const ttlMs = 5_000;

/** A loader that finds only the given keys, and counts its calls per key. */
function countingLoader(existing: string[]) {
  const calls = new Map<string, number>();
  return {
    calls: (key: string) => calls.get(key) ?? 0,
    load: (key: string) => async () => {
      calls.set(key, (calls.get(key) ?? 0) + 1);
      return existing.includes(key) ? `value of ${key}` : undefined;
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('LoadingCache', () => {
  it('keeps found items while thousands of missing keys are looked up', async () => {
    const cache = new LoadingCache<string>({ maxEntries: 10, maxMissingEntries: 5, missingTtlMs: 2_000 });
    const loader = countingLoader(['real']);
    expect(await cache.get('real', ttlMs, loader.load('real'))).toBe('value of real');
    for (let i = 0; i < 5_000; i++) expect(await cache.get(`junk-${i}`, ttlMs, loader.load(`junk-${i}`))).toBeUndefined();
    expect(await cache.get('real', ttlMs, loader.load('real'))).toBe('value of real');
    expect(loader.calls('real')).toBe(1);
    expect(cache.sizes()).toMatchObject({ found: 1, missing: 5, loading: 0 });
  });

  it('bounds missing keys by their own limit, newest kept', async () => {
    const cache = new LoadingCache<string>({ maxEntries: 100, maxMissingEntries: 3, missingTtlMs: 2_000 });
    const loader = countingLoader([]);
    for (const key of ['a', 'b', 'c', 'd']) await cache.get(key, ttlMs, loader.load(key));
    await cache.get('d', ttlMs, loader.load('d'));
    await cache.get('a', ttlMs, loader.load('a'));
    expect([loader.calls('a'), loader.calls('d')]).toEqual([2, 1]);
    expect(cache.sizes().missing).toBe(3);
  });

  it('bounds missing keys by maxEntries when no limit of their own is given', async () => {
    const cache = new LoadingCache<string>({ maxEntries: 4, missingTtlMs: 2_000 });
    const loader = countingLoader([]);
    for (let i = 0; i < 50; i++) await cache.get(`k${i}`, ttlMs, loader.load(`k${i}`));
    expect(cache.sizes().missing).toBe(4);
  });

  it('drops the oldest found item beyond maxEntries', async () => {
    const cache = new LoadingCache<string>({ maxEntries: 2, missingTtlMs: 2_000 });
    const loader = countingLoader(['a', 'b', 'c']);
    for (const key of ['a', 'b', 'c', 'c', 'b', 'a']) await cache.get(key, ttlMs, loader.load(key));
    expect([loader.calls('a'), loader.calls('b'), loader.calls('c')]).toEqual([2, 1, 1]);
    expect(cache.sizes().found).toBe(2);
  });

  it('keeps a found item ttlMs and a miss missingTtlMs', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const cache = new LoadingCache<string>({ maxEntries: 10, missingTtlMs: 2_000 });
    const loader = countingLoader(['here']);
    await cache.get('here', ttlMs, loader.load('here'));
    await cache.get('gone', ttlMs, loader.load('gone'));
    vi.advanceTimersByTime(1_999);
    await cache.get('here', ttlMs, loader.load('here'));
    await cache.get('gone', ttlMs, loader.load('gone'));
    expect([loader.calls('here'), loader.calls('gone')]).toEqual([1, 1]);
    vi.advanceTimersByTime(2);
    await cache.get('gone', ttlMs, loader.load('gone'));
    expect(loader.calls('gone')).toBe(2);
    vi.advanceTimersByTime(3_000);
    await cache.get('here', ttlMs, loader.load('here'));
    expect(loader.calls('here')).toBe(2);
  });

  it('shares one load among concurrent lookups of a key', async () => {
    const cache = new LoadingCache<string>({ maxEntries: 10, missingTtlMs: 2_000 });
    let calls = 0;
    let finish!: (value: string) => void;
    const load = () => {
      calls++;
      return new Promise<string>((resolve) => (finish = resolve));
    };
    const lookups = [cache.get('k', ttlMs, load), cache.get('k', ttlMs, load), cache.get('k', ttlMs, load)];
    expect(cache.sizes().loading).toBe(1);
    finish('v');
    expect(await Promise.all(lookups)).toEqual(['v', 'v', 'v']);
    expect(calls).toBe(1);
    expect(cache.sizes()).toMatchObject({ found: 1, loading: 0 });
  });

  it('does not keep a failed load', async () => {
    const cache = new LoadingCache<string>({ maxEntries: 10, missingTtlMs: 2_000 });
    await expect(cache.get('k', ttlMs, async () => Promise.reject(new Error('table unreachable')))).rejects.toThrow('table unreachable');
    expect(cache.sizes()).toMatchObject({ found: 0, missing: 0, loading: 0 });
    expect(await cache.get('k', ttlMs, async () => 'v')).toBe('v');
  });

  it('does not keep what a load started before clear() returns', async () => {
    const cache = new LoadingCache<string>({ maxEntries: 10, missingTtlMs: 2_000 });
    let finish!: (value: string) => void;
    const lookup = cache.get('k', ttlMs, () => new Promise<string>((resolve) => (finish = resolve)));
    cache.clear();
    finish('stale');
    expect(await lookup).toBe('stale');
    expect(await cache.get('k', ttlMs, async () => 'fresh')).toBe('fresh');
  });
});
