import type { TokenUsage } from '../core/usage';
import { getCacheEntry, putCacheEntry, type CacheEntry } from '../store/cache-entries';
import { FirstLevelCache } from './first-level';

/** Without `max_age`, an answer is kept a week (the config allows 1 s to 90 days). */
export const defaultMaxAgeSeconds = 7 * 86_400;

/** A force-refresh made by another process shows in this one within this time. */
const firstLevelFreshnessMs = 5_000;
const firstLevel = new FirstLevelCache<CacheEntry>({ maxBytes: 32 * 1024 * 1024, freshnessMs: firstLevelFreshnessMs });

/** Where an answer is kept: the workspace, the partition (namespace, or metadata and credential), the request's key. */
export interface CacheSlot {
  workspaceId: string;
  partition: string;
  key: string;
}

const slotId = (slot: CacheSlot) => `${slot.workspaceId}\n${slot.partition}\n${slot.key}`;

/**
 * The stored answer for a slot, if one has not expired: the first level, then the shared store. A
 * store that cannot be read is a miss, never a failed request.
 */
export async function findCachedAnswer(slot: CacheSlot, now = Date.now()): Promise<CacheEntry | undefined> {
  const id = slotId(slot);
  const held = firstLevel.get(id, now);
  if (held) return held;
  try {
    const stored = await getCacheEntry(slot.workspaceId, slot.partition, slot.key, now);
    if (stored) firstLevel.set(id, stored, now);
    return stored;
  } catch (error) {
    console.error('The response cache could not be read; answering from the provider', error);
    return undefined;
  }
}

/** Keeps a complete, successful answer for `maxAgeSeconds`. A store that fails is reported, never thrown. */
export async function rememberAnswer(slot: CacheSlot, answer: { body: Buffer; usage?: TokenUsage }, maxAgeSeconds: number, now = Date.now()): Promise<void> {
  const entry: CacheEntry = { body: answer.body, status: 200, headers: {}, usage: answer.usage, createdAt: now, expiresAt: now + maxAgeSeconds * 1000 };
  firstLevel.set(slotId(slot), entry, now);
  try {
    await putCacheEntry(slot.workspaceId, slot.partition, slot.key, entry);
  } catch (error) {
    console.error('An answer could not be stored in the response cache', error);
  }
}
