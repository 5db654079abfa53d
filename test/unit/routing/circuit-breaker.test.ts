import { beforeEach, describe, expect, it } from 'vitest';
import type { CircuitBreakerSettings } from '../../../lib/config/types';
import { CircuitBreakers, isBreakerFailure, verdict } from '../../../lib/routing/circuit-breaker';
import type { BreakerStateStore } from '../../../lib/store/breaker-state';
import { memoryBreakerStore } from '../../../lib/store/memory/breaker-state';

// Sharing the breakers between containers through DynamoDB is test/integration/circuit-breaker.test.ts;
// here the store is in memory and every clock reading is given, so each rule is checked on its own.
const identity = 'saved:cfg_breaker';
const path = 'config.targets[0]';
const settings: CircuitBreakerSettings = { failure_threshold: 2, cooldown_interval: 30_000 };
const t0 = Date.parse('2026-11-22T10:00:00Z');

let store: BreakerStateStore;
let breakers: CircuitBreakers;
beforeEach(() => {
  store = memoryBreakerStore();
  breakers = new CircuitBreakers(store);
});

async function verdictAt(now: number) {
  return verdict((await breakers.load(identity, now)).get(path), settings, now);
}

/** Fails the target until it opens, at `now`. */
async function openAt(now: number) {
  for (let failure = 0; failure < settings.failure_threshold; failure++) await breakers.recordFailure(identity, path, settings, now);
}

describe('circuit breaker', () => {
  it('opens after failure_threshold failures', async () => {
    expect(await verdictAt(t0)).toBe('closed');
    await breakers.recordFailure(identity, path, settings, t0);
    expect(await verdictAt(t0)).toBe('closed');
    await breakers.recordFailure(identity, path, settings, t0 + 10);
    expect(await verdictAt(t0 + 10)).toBe('open');
    expect((await store.read(identity)).get(path)).toMatchObject({ failures: 2, openedAt: t0 + 10 });
  });

  it('stays open until the cooldown has passed, then lets a probe through', async () => {
    await openAt(t0);
    expect(await verdictAt(t0 + settings.cooldown_interval - 1)).toBe('open');
    expect(await breakers.claimProbe(identity, path, settings, t0 + settings.cooldown_interval - 1)).toBe(false);
    expect(await verdictAt(t0 + settings.cooldown_interval)).toBe('half-open');
  });

  it('failures of requests already under way do not push the cooldown further', async () => {
    await openAt(t0);
    await breakers.recordFailure(identity, path, settings, t0 + 5_000);
    expect((await store.read(identity)).get(path)).toMatchObject({ failures: 3, openedAt: t0 });
    expect(await verdictAt(t0 + settings.cooldown_interval)).toBe('half-open');
  });

  it('lets exactly one of concurrent requests claim the probe, and keeps the target open to the others', async () => {
    await openAt(t0);
    const cooled = t0 + settings.cooldown_interval;
    const claims = await Promise.all(Array.from({ length: 5 }, () => breakers.claimProbe(identity, path, settings, cooled)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await verdictAt(cooled + 1)).toBe('open');
    expect(await breakers.claimProbe(identity, path, settings, cooled + settings.cooldown_interval - 1)).toBe(false);
  });

  it('offers another probe when the last one has not reported back within a cooldown', async () => {
    await openAt(t0);
    const cooled = t0 + settings.cooldown_interval;
    expect(await breakers.claimProbe(identity, path, settings, cooled)).toBe(true);
    // The probe's container may have been frozen or stopped before it could record anything.
    expect(await verdictAt(cooled + settings.cooldown_interval)).toBe('half-open');
    expect(await breakers.claimProbe(identity, path, settings, cooled + settings.cooldown_interval)).toBe(true);
  });

  it('re-opens on a failed probe, for another full cooldown', async () => {
    await openAt(t0);
    const probedAt = t0 + settings.cooldown_interval + 500;
    expect(await breakers.claimProbe(identity, path, settings, probedAt)).toBe(true);
    await breakers.recordFailure(identity, path, settings, probedAt + 200);
    const reopened = (await store.read(identity)).get(path);
    expect(reopened?.openedAt).toBe(probedAt + 200);
    expect(reopened?.probeAt).toBeUndefined();
    expect(await verdictAt(probedAt + 200 + settings.cooldown_interval - 1)).toBe('open');
    expect(await verdictAt(probedAt + 200 + settings.cooldown_interval)).toBe('half-open');
  });

  it('closes on a success: the breaker is gone and counting starts again', async () => {
    await openAt(t0);
    const probedAt = t0 + settings.cooldown_interval;
    expect(await breakers.claimProbe(identity, path, settings, probedAt)).toBe(true);
    await breakers.recordSuccess(identity, path);
    expect((await store.read(identity)).has(path)).toBe(false);
    expect(await verdictAt(probedAt + 1)).toBe('closed');
    await breakers.recordFailure(identity, path, settings, probedAt + 2);
    expect(await verdictAt(probedAt + 2)).toBe('closed');
  });

  it('keeps breakers of other targets and other configs apart', async () => {
    await openAt(t0);
    await breakers.recordFailure('saved:cfg_other', path, { ...settings, failure_threshold: 1 }, t0);
    const states = await breakers.load(identity, t0);
    expect(verdict(states.get('config.targets[1]'), settings, t0)).toBe('closed');
    expect((await store.read('saved:cfg_other')).get(path)).toMatchObject({ failures: 1, openedAt: t0 });
    await breakers.recordSuccess('saved:cfg_other', path);
    expect(await verdictAt(t0 + 1)).toBe('open');
  });

  it('counts network errors, 408 and statuses above 500 by default; failure_status_codes replaces the statuses', () => {
    expect(isBreakerFailure(settings, 0, true)).toBe(true);
    expect(isBreakerFailure(settings, 408, false)).toBe(true);
    expect(isBreakerFailure(settings, 502, false)).toBe(true);
    expect(isBreakerFailure(settings, 503, false)).toBe(true);
    expect(isBreakerFailure(settings, 500, false)).toBe(false);
    expect(isBreakerFailure(settings, 429, false)).toBe(false);
    expect(isBreakerFailure(settings, 200, false)).toBe(false);

    const listed = { ...settings, failure_status_codes: [429, 500] };
    expect(isBreakerFailure(listed, 429, false)).toBe(true);
    expect(isBreakerFailure(listed, 500, false)).toBe(true);
    expect(isBreakerFailure(listed, 503, false)).toBe(false);
    expect(isBreakerFailure(listed, 408, false)).toBe(true);
    expect(isBreakerFailure(listed, 0, true)).toBe(true);
  });

  it('caches reads for a second, and forgets them after its own writes', async () => {
    expect(await verdictAt(t0)).toBe('closed');
    // Another container opens the target: this one keeps its cached read until it expires.
    await store.addFailure(identity, path, t0 + 1);
    await store.open(identity, path, t0 + 1);
    expect(await verdictAt(t0 + 999)).toBe('closed');
    expect(await verdictAt(t0 + 1_000)).toBe('open');

    await breakers.recordSuccess(identity, path);
    expect(await verdictAt(t0 + 1_001)).toBe('closed');
    await openAt(t0 + 1_002);
    expect(await verdictAt(t0 + 1_003)).toBe('open');

    const cooled = t0 + 1_002 + settings.cooldown_interval;
    expect(await verdictAt(cooled)).toBe('half-open');
    expect(await breakers.claimProbe(identity, path, settings, cooled)).toBe(true);
    expect(await verdictAt(cooled + 1)).toBe('open');
  });

  it("keeps the breakers of one store apart from another store's", async () => {
    await openAt(t0);
    expect(await verdictAt(t0)).toBe('open');
    const elsewhere = new CircuitBreakers(memoryBreakerStore());
    expect(verdict((await elsewhere.load(identity, t0 + 1)).get(path), settings, t0 + 1)).toBe('closed');
    expect(await verdictAt(t0 + 2)).toBe('open');
  });
});

describe('in-memory breaker store', () => {
  it('claims no probe on a breaker that is missing or closed, and creates none', async () => {
    expect(await store.claimProbe(identity, path, t0, t0)).toBe(false);
    await store.addFailure(identity, path, t0);
    expect(await store.claimProbe(identity, path, t0, t0)).toBe(false);
    expect((await store.read(identity)).get(path)).toEqual({ failures: 1 });
    expect((await store.read('saved:cfg_missing')).size).toBe(0);
  });

  it('opens a breaker it has not seen, ends the probe when opening, and deletes what is missing without error', async () => {
    await store.open(identity, path, t0);
    expect((await store.read(identity)).get(path)).toEqual({ failures: 0, openedAt: t0 });
    expect(await store.claimProbe(identity, path, t0 + 10, t0)).toBe(true);
    await store.open(identity, path, t0 + 20);
    expect((await store.read(identity)).get(path)).toEqual({ failures: 0, openedAt: t0 + 20 });
    await store.delete(identity, path);
    await store.delete(identity, path);
    expect((await store.read(identity)).size).toBe(0);
  });

  it('returns the failure count after each atomic increment, and copies that callers cannot change it through', async () => {
    const counts = await Promise.all([1, 2, 3].map(() => store.addFailure(identity, path, t0)));
    expect(counts.map((breaker) => breaker.failures).sort()).toEqual([1, 2, 3]);
    (await store.read(identity)).get(path)!.failures = 99;
    counts[0]!.openedAt = t0;
    expect((await store.read(identity)).get(path)).toEqual({ failures: 3 });
  });
});
