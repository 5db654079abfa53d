import type { CircuitBreakerSettings } from '../config/types';
import type { BreakerStateStore, StoredBreaker } from '../store/breaker-state';

/**
 * Circuit breakers shared by every Lambda container: one item per (config identity, target path)
 * in the state table, with absolute timestamps. A target opens after `failure_threshold` failures,
 * lets one probe through once `cooldown_interval` has passed (half-open), and closes on a success.
 * Reads are one Query per config identity, cached for a second.
 */
export type BreakerState = StoredBreaker;

export type BreakerVerdict = 'closed' | 'open' | 'half-open';

/**
 * The identity a workspace's breakers for one config are kept under. A workspace of its own in the
 * key: two tenants that send the same inline config (whose `@slug`s may name different hosts in
 * each) never open each other's targets.
 */
export function breakerIdentity(workspaceId: string, configIdentity: string): string {
  return `${workspaceId}#${configIdentity}`;
}

const readCacheMs = 1_000;
const maxCachedIdentities = 5_000;

/** The breakers of one store (the state table; a test's memory), with this process's read cache in front. */
export class CircuitBreakers {
  private readonly cache = new Map<string, { states: Map<string, BreakerState>; expiresAt: number }>();

  constructor(private readonly store: BreakerStateStore) {}

  /** The breaker states of one config, by target path. */
  async load(identity: string, now = Date.now()): Promise<Map<string, BreakerState>> {
    const cached = this.cache.get(identity);
    if (cached && cached.expiresAt > now) return cached.states;
    const states = await this.store.read(identity);
    this.cache.set(identity, { states, expiresAt: now + readCacheMs });
    if (this.cache.size > maxCachedIdentities) this.cache.delete(this.cache.keys().next().value!);
    return states;
  }

  /** Claims the half-open probe; false when another request claimed it first. */
  async claimProbe(identity: string, path: string, settings: CircuitBreakerSettings, now = Date.now()): Promise<boolean> {
    const claimed = await this.store.claimProbe(identity, path, now, now - settings.cooldown_interval);
    if (claimed) this.cache.delete(identity);
    return claimed;
  }

  /** Counts a failure; opens (or re-opens, after a failed probe) once the threshold is reached. */
  async recordFailure(identity: string, path: string, settings: CircuitBreakerSettings, now = Date.now()): Promise<void> {
    const state = await this.store.addFailure(identity, path, now);
    const probeFailed = state.probeAt !== undefined;
    if (state.failures >= settings.failure_threshold && (!state.openedAt || probeFailed)) await this.store.open(identity, path, now);
    this.cache.delete(identity);
  }

  /** A success closes the breaker (only written when there was something to clear). */
  async recordSuccess(identity: string, path: string): Promise<void> {
    await this.store.delete(identity, path);
    this.cache.delete(identity);
  }
}

export function verdict(state: BreakerState | undefined, settings: CircuitBreakerSettings, now = Date.now()): BreakerVerdict {
  if (!state?.openedAt) return 'closed';
  if (now < state.openedAt + settings.cooldown_interval) return 'open';
  // One probe per cooldown: while a probe is out, the target stays open to everyone else.
  if (state.probeAt && now < state.probeAt + settings.cooldown_interval) return 'open';
  return 'half-open';
}

/** Whether a finished attempt counts as a failure for the breaker. */
export function isBreakerFailure(settings: CircuitBreakerSettings, status: number, network: boolean): boolean {
  if (network || status === 408) return true;
  return settings.failure_status_codes ? settings.failure_status_codes.includes(status) : status > 500;
}
