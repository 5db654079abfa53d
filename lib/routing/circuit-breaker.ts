import type { CircuitBreakerSettings } from '../config/types';
import { dynamoBreakerStore, type BreakerStateStore, type StoredBreaker } from '../store/breaker-state';

/**
 * Circuit breakers shared by every Lambda container: one item per (config identity, target path)
 * in the state table, with absolute timestamps. A target opens after `failure_threshold` failures,
 * lets one probe through once `cooldown_interval` has passed (half-open), and closes on a success.
 * Reads are one Query per config identity, cached for a second.
 */
export type BreakerState = StoredBreaker;

export type BreakerVerdict = 'closed' | 'open' | 'half-open';

const readCacheMs = 1_000;
const cache = new Map<string, { states: Map<string, BreakerState>; expiresAt: number }>();

let store: BreakerStateStore = dynamoBreakerStore;

/**
 * Puts the breakers in another store (a test's in-memory one) until the returned function is called.
 * A module variable rather than a parameter, so the request path passes no store around.
 */
export function useBreakerStateStore(next: BreakerStateStore): () => void {
  const previous = store;
  store = next;
  // States read from one store must not answer for another.
  cache.clear();
  return () => {
    store = previous;
    cache.clear();
  };
}

/** The breaker states of one config, by target path. */
export async function loadBreakerStates(identity: string, now = Date.now()): Promise<Map<string, BreakerState>> {
  const cached = cache.get(identity);
  if (cached && cached.expiresAt > now) return cached.states;
  const states = await store.read(identity);
  cache.set(identity, { states, expiresAt: now + readCacheMs });
  if (cache.size > 5_000) cache.delete(cache.keys().next().value!);
  return states;
}

export function verdict(state: BreakerState | undefined, settings: CircuitBreakerSettings, now = Date.now()): BreakerVerdict {
  if (!state?.openedAt) return 'closed';
  if (now < state.openedAt + settings.cooldown_interval) return 'open';
  // One probe per cooldown: while a probe is out, the target stays open to everyone else.
  if (state.probeAt && now < state.probeAt + settings.cooldown_interval) return 'open';
  return 'half-open';
}

/** Claims the half-open probe; false when another request claimed it first. */
export async function claimProbe(identity: string, path: string, settings: CircuitBreakerSettings, now = Date.now()): Promise<boolean> {
  const claimed = await store.claimProbe(identity, path, now, now - settings.cooldown_interval);
  if (claimed) forget(identity);
  return claimed;
}

/** Whether a finished attempt counts as a failure for the breaker. */
export function isBreakerFailure(settings: CircuitBreakerSettings, status: number, network: boolean): boolean {
  if (network || status === 408) return true;
  return settings.failure_status_codes ? settings.failure_status_codes.includes(status) : status > 500;
}

/** Counts a failure; opens (or re-opens, after a failed probe) once the threshold is reached. */
export async function recordFailure(identity: string, path: string, settings: CircuitBreakerSettings, now = Date.now()): Promise<void> {
  const state = await store.addFailure(identity, path, now);
  const probeFailed = state.probeAt !== undefined;
  if (state.failures >= settings.failure_threshold && (!state.openedAt || probeFailed)) await store.open(identity, path, now);
  forget(identity);
}

/** A success closes the breaker (only written when there was something to clear). */
export async function recordSuccess(identity: string, path: string): Promise<void> {
  await store.delete(identity, path);
  forget(identity);
}

function forget(identity: string): void {
  cache.delete(identity);
}
