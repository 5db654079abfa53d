/**
 * An in-memory cache for hot-path lookups of stored items: entries live `ttlMs` (a miss only
 * `missingTtlMs`, so a newly created item shows up soon), concurrent misses share one load, a failed
 * load is not kept, and the oldest entries go first beyond `maxEntries`.
 */
export class LoadingCache<T> {
  private readonly entries = new Map<string, { value: Promise<T | undefined>; expiresAt: number }>();

  constructor(private readonly options: { maxEntries: number; missingTtlMs: number }) {}

  async get(key: string, ttlMs: number, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const now = Date.now();
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > now) return entry.value;
    this.entries.delete(key);
    const fresh = { value: load(), expiresAt: now + ttlMs };
    while (this.entries.size >= this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, fresh);
    try {
      const found = await fresh.value;
      if (found === undefined) fresh.expiresAt = Math.min(fresh.expiresAt, now + this.options.missingTtlMs);
      return found;
    } catch (error) {
      if (this.entries.get(key) === fresh) this.entries.delete(key);
      throw error;
    }
  }

  clear(): void {
    this.entries.clear();
  }
}
