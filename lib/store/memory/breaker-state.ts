import type { BreakerStateStore, StoredBreaker } from '../breaker-state';

/**
 * The breaker store in memory, for fast unit tests of the breaker's logic. It keeps the table's
 * conditions, because that logic relies on them: a probe is claimed only when the breaker opened
 * and cooled and no probe is out since then, failures count up atomically and create the breaker,
 * opening ends any probe (and, like an UpdateItem, creates a breaker that was not there), and a
 * delete of a missing breaker is no error. The item's TTL is left out: DynamoDB deletes expired
 * items whenever it gets to them, so no logic may count on it.
 *
 * Each operation reads and writes in one synchronous step after its call, so that concurrent
 * calls interleave only between operations, as conditional writes to one item do.
 */
export function memoryBreakerStore(): BreakerStateStore {
  const identities = new Map<string, Map<string, StoredBreaker>>();
  const breakersOf = (identity: string) => {
    let breakers = identities.get(identity);
    if (!breakers) identities.set(identity, (breakers = new Map()));
    return breakers;
  };
  // Callers get copies: what they hold must not change under them, as a read from the table would not.
  const copy = (breaker: StoredBreaker): StoredBreaker => ({ ...breaker });

  return {
    async read(identity) {
      return new Map([...(identities.get(identity) ?? [])].map(([path, breaker]) => [path, copy(breaker)]));
    },

    async claimProbe(identity, path, now, cooledBefore) {
      const breaker = identities.get(identity)?.get(path);
      if (breaker?.openedAt === undefined || breaker.openedAt > cooledBefore) return false;
      if (breaker.probeAt !== undefined && breaker.probeAt > cooledBefore) return false;
      breaker.probeAt = now;
      return true;
    },

    async addFailure(identity, path) {
      const breakers = breakersOf(identity);
      const breaker = breakers.get(path) ?? { failures: 0 };
      breaker.failures += 1;
      breakers.set(path, breaker);
      return copy(breaker);
    },

    async open(identity, path, now) {
      const breakers = breakersOf(identity);
      const breaker = breakers.get(path) ?? { failures: 0 };
      breaker.openedAt = now;
      delete breaker.probeAt;
      breakers.set(path, breaker);
    },

    async delete(identity, path) {
      identities.get(identity)?.delete(path);
    },
  };
}
