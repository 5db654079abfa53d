/**
 * An in-memory cache for hot-path lookups of stored items: entries live `ttlMs` (a miss only
 * `missingTtlMs`, so a newly created item shows up soon), concurrent misses share one load, and a
 * failed load is not kept.
 *
 * Found items and misses are bounded apart, each dropping its oldest entries first: `maxEntries`
 * found items and `maxMissingEntries` misses (as many as `maxEntries` unless set). Callers choose
 * what they ask for, so a flood of lookups for things that do not exist must never push out the
 * items that do.
 */
export class LoadingCache<T> {
  private readonly found = new Map<string, { value: T; expiresAt: number }>();
  /** Expiry of each miss. */
  private readonly missing = new Map<string, number>();
  /** Loads under way; bounded by the lookups in flight, and emptied as they settle. */
  private readonly loading = new Map<string, Promise<T | undefined>>();

  constructor(private readonly options: { maxEntries: number; maxMissingEntries?: number; missingTtlMs: number }) {}

  async get(key: string, ttlMs: number, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const now = Date.now();
    const hit = this.found.get(key);
    if (hit) {
      if (hit.expiresAt > now) return hit.value;
      this.found.delete(key);
    }
    const missUntil = this.missing.get(key);
    if (missUntil !== undefined) {
      if (missUntil > now) return undefined;
      this.missing.delete(key);
    }
    return this.loading.get(key) ?? this.load(key, ttlMs, load, now);
  }

  clear(): void {
    this.found.clear();
    this.missing.clear();
    this.loading.clear();
  }

  /** How many entries each part holds, and the length of their keys together (tests). */
  sizes(): { found: number; missing: number; loading: number; keyChars: number } {
    let keyChars = 0;
    for (const map of [this.found, this.missing, this.loading]) for (const key of map.keys()) keyChars += key.length;
    return { found: this.found.size, missing: this.missing.size, loading: this.loading.size, keyChars };
  }

  private async load(key: string, ttlMs: number, load: () => Promise<T | undefined>, now: number): Promise<T | undefined> {
    const pending = load();
    this.loading.set(key, pending);
    try {
      const value = await pending;
      // After clear() (or a newer load of the same key) this result is stale and is not kept.
      if (this.loading.get(key) === pending) this.remember(key, value, now, ttlMs);
      return value;
    } finally {
      if (this.loading.get(key) === pending) this.loading.delete(key);
    }
  }

  private remember(key: string, value: T | undefined, now: number, ttlMs: number): void {
    if (value === undefined) {
      const expiresAt = now + Math.min(ttlMs, this.options.missingTtlMs);
      insertBounded(this.missing, key, expiresAt, this.options.maxMissingEntries ?? this.options.maxEntries);
    } else {
      insertBounded(this.found, key, { value, expiresAt: now + ttlMs }, this.options.maxEntries);
    }
  }
}

function insertBounded<V>(map: Map<string, V>, key: string, value: V, maxEntries: number): void {
  map.delete(key);
  // A Map iterates in insertion order, so its first key is the oldest.
  while (map.size >= maxEntries) map.delete(map.keys().next().value!);
  map.set(key, value);
}
