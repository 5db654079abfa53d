import type { TokenUsage } from '../core/usage';
import type { AnswerStore } from '../store/answer-store';
import type { CacheEntry } from '../store/cache-entries';
import type { SemanticRef } from '../store/semantic-entries';
import { FirstLevelCache } from './first-level';

/** Without `max_age`, an answer is kept a week (the config allows 1 s to 90 days). */
export const defaultMaxAgeSeconds = 7 * 86_400;

/** A force-refresh made by another process shows in this one within this time. */
const firstLevelFreshnessMs = 5_000;

/** Where an answer is kept: the workspace, the partition (namespace, or metadata and credential), the request's key. */
export interface CacheSlot {
  workspaceId: string;
  partition: string;
  key: string;
}

const slotId = (slot: CacheSlot) => `${slot.workspaceId}\n${slot.partition}\n${slot.key}`;

export interface AnswerToKeep {
  body: Buffer;
  usage?: TokenUsage;
  /** The semantic entry about to be stored for this answer. */
  semanticRef?: SemanticRef;
}

/**
 * Exact answers of one store, with a first level in this process's memory in front of it: a hit
 * there costs no read.
 */
export class ResponseCache {
  private readonly firstLevel = new FirstLevelCache<CacheEntry>({ maxBytes: 32 * 1024 * 1024, freshnessMs: firstLevelFreshnessMs });

  constructor(readonly store: AnswerStore) {}

  /**
   * The stored answer for a slot, if one has not expired: the first level, then the shared store. A
   * store that cannot be read is a miss, never a failed request.
   */
  async find(slot: CacheSlot, now = Date.now()): Promise<CacheEntry | undefined> {
    const id = slotId(slot);
    const held = this.firstLevel.get(id, now);
    if (held) return held;
    try {
      const stored = await this.store.get(slot.workspaceId, slot.partition, slot.key, now);
      if (stored) this.firstLevel.set(id, stored, now);
      return stored;
    } catch (error) {
      console.error('The response cache could not be read; answering from the provider', error);
      return undefined;
    }
  }

  /**
   * Keeps a complete, successful answer until `expiresAt` (epoch ms), and deletes the semantic entry
   * of an answer it replaces. Answers whether it was stored; a store that fails is reported, never
   * thrown.
   */
  async remember(slot: CacheSlot, answer: AnswerToKeep, expiresAt: number, now = Date.now()): Promise<boolean> {
    const entry: CacheEntry = { body: answer.body, status: 200, headers: {}, usage: answer.usage, createdAt: now, expiresAt, semanticRef: answer.semanticRef };
    this.firstLevel.set(slotId(slot), entry, now);
    let replaced: SemanticRef | undefined;
    try {
      replaced = await this.store.put(slot.workspaceId, slot.partition, slot.key, entry);
    } catch (error) {
      console.error('An answer could not be stored in the response cache', error);
      return false;
    }
    if (replaced)
      await this.store
        .deleteSemantic(slot.workspaceId, [replaced])
        .catch((error) => console.error('A replaced semantic cache entry could not be deleted; TTL will remove it', error));
    return true;
  }
}
