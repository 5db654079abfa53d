import { readBody } from '../core/read-body';
import { sendOutbound } from '../outbound/http-client';
import { readKeySet, type VerificationKey } from './jwt-verify';

/**
 * Identity providers' key sets (JWKS), fetched through the guarded outbound client (loopback,
 * private and metadata addresses refused unless the operator allow-lists them; no redirects) and
 * kept per provider. A token whose `kid` the cached set lacks fetches the set again, at most once
 * every 30 s per provider, so a key rotation is picked up at once and a flood of made-up `kid`s
 * costs the provider's endpoint one call per 30 s.
 */

export const keySetTtlMs = 10 * 60_000;
export const refetchIntervalMs = 30_000;
const fetchTimeoutMs = 5_000;
const maxKeySetBytes = 256 * 1024;
const maxCachedSets = 200;

export type FetchKeySet = (url: URL) => Promise<unknown>;

interface CachedSet {
  url: string;
  keys: VerificationKey[];
  /** When the set was last fetched (the TTL counts from here). */
  fetchedAt: number;
  /** When a fetch was last tried, successful or not (the 30 s between refetches count from here). */
  triedAt: number;
}

/** Fetches a JWKS document with the outbound client: 5 s in all, at most 256 KB, JSON. */
export const fetchKeySetDocument: FetchKeySet = async (url) => {
  const what = `The JWKS endpoint ${url.host}`;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), fetchTimeoutMs);
  try {
    const response = await sendOutbound({ url, method: 'GET', headers: { accept: 'application/json' }, target: what, signal: controller.signal });
    const body = await readBody(response.body, maxKeySetBytes, `The answer of ${what}`);
    if (response.status !== 200) throw new Error(`${what} answered with status ${response.status}.`);
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    if (controller.signal.aborted) throw new Error(`${what} did not answer within ${fetchTimeoutMs} ms.`);
    throw error instanceof SyntaxError ? new Error(`${what} answered with a body that is not JSON.`) : error;
  } finally {
    clearTimeout(timer);
  }
};

/** The key sets of the providers a function instance has met. */
export class KeySetCache {
  private readonly sets = new Map<string, CachedSet>();
  private readonly loading = new Map<string, Promise<CachedSet>>();

  constructor(
    private readonly fetchDocument: FetchKeySet = fetchKeySetDocument,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The key `find` picks from the provider's set: the cached set first, then (when it has none and
   * the set was fetched 30 s ago or more, or is older than its TTL) the set fetched again.
   */
  async keyFor(providerId: string, url: string, find: (keys: readonly VerificationKey[]) => VerificationKey | undefined): Promise<VerificationKey | undefined> {
    const cached = this.sets.get(providerId);
    const usable = cached?.url === url ? cached : undefined;
    if (usable && this.now() - usable.fetchedAt < keySetTtlMs) {
      const key = find(usable.keys);
      if (key || this.now() - usable.triedAt < refetchIntervalMs) return key;
    }
    return find((await this.load(providerId, url, usable)).keys);
  }

  private load(providerId: string, url: string, previous: CachedSet | undefined): Promise<CachedSet> {
    const pending = this.loading.get(providerId);
    if (pending) return pending;
    const work = (async () => {
      const triedAt = this.now();
      try {
        const keys = readKeySet(await this.fetchDocument(new URL(url)));
        return this.keep(providerId, { url, keys, fetchedAt: triedAt, triedAt });
      } catch (error) {
        // A set already held keeps serving for another 30 s; the endpoint is tried again after that, not on every request.
        if (previous)
          return this.keep(providerId, { ...previous, fetchedAt: Math.max(previous.fetchedAt, triedAt - keySetTtlMs + refetchIntervalMs), triedAt });
        throw error;
      }
    })();
    this.loading.set(providerId, work);
    work.then(
      () => this.loading.delete(providerId),
      () => this.loading.delete(providerId),
    );
    return work;
  }

  private keep(providerId: string, entry: CachedSet): CachedSet {
    this.sets.delete(providerId);
    if (this.sets.size >= maxCachedSets) this.sets.delete(this.sets.keys().next().value!);
    this.sets.set(providerId, entry);
    return entry;
  }

  /** Forgets every set (tests). */
  clear(): void {
    this.sets.clear();
    this.loading.clear();
  }
}
