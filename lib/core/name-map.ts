/**
 * An empty record for names that come from outside (header names, query parameters): it has no
 * prototype, so `constructor`, `__proto__` or `toString` read as absent until set and are stored as
 * ordinary entries, instead of reaching Object.prototype.
 */
export function nameMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}
