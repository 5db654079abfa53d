import { newId } from '../core/ids';
import { matchesAbove, signatures, type Vector } from '../core/semantic-index';
import type { AnswerStore } from '../store/answer-store';
import type { CacheEntry } from '../store/cache-entries';
import { LoadingCache } from '../store/loading-cache';
import { semanticRefOf } from '../store/semantic-entries';
import type { WorkspaceCacheSettings } from '../store/workspaces';
import { ResponseCache, type AnswerToKeep, type CacheSlot } from './response-cache';

/** A change to a workspace's cache settings reaches every process within this time. */
const settingsFreshnessMs = 5_000;

/**
 * Above the threshold, the most similar candidates whose answers are tried in turn: the best one's
 * answer may have been purged, replaced by one that calls tools, or expired before its vector.
 */
const answersTried = 3;

/** The response cache over one store: exact answers, and answers found by the meaning of a chat's last user message. */
export interface AnswerCache {
  exact: ResponseCache;
  semantic: SemanticCache;
}

export function answerCache(store: AnswerStore): AnswerCache {
  const exact = new ResponseCache(store);
  return { exact, semantic: new SemanticCache(exact) };
}

/** Answers by meaning: vectors in the store's semantic entries, each naming an exact entry that answers. */
export class SemanticCache {
  private readonly settingsCache = new LoadingCache<WorkspaceCacheSettings>({ maxEntries: 10_000, missingTtlMs: settingsFreshnessMs });

  constructor(private readonly exact: ResponseCache) {}

  /**
   * The workspace's semantic cache settings (read at most every few seconds per process), or
   * undefined when it has none, which makes semantic mode behave as simple. A store that cannot be
   * read counts as none: the exact cache still works.
   */
  async settingsOf(workspaceId: string): Promise<WorkspaceCacheSettings | undefined> {
    try {
      return await this.settingsCache.get(workspaceId, settingsFreshnessMs, () => this.exact.store.semanticSettings(workspaceId));
    } catch (error) {
      console.error("The workspace's semantic cache settings could not be read; caching exactly", error);
      return undefined;
    }
  }

  /**
   * A stored answer to a request of the same scope whose last user message is at least `threshold`
   * alike, with that similarity; undefined for none, and for a lookup that fails (a miss, never a
   * failed request). An answer that calls tools is never served for another question.
   */
  async find(workspaceId: string, scope: string, vector: Vector, threshold: number): Promise<{ entry: CacheEntry; similarity: number } | undefined> {
    try {
      const candidates = await this.exact.store.findCandidates(workspaceId, scope, signatures(vector));
      for (const { candidate, similarity } of matchesAbove(vector, candidates, threshold).slice(0, answersTried)) {
        const entry = await this.exact.find({ workspaceId, partition: candidate.answerRef.partition, key: candidate.answerRef.key });
        if (entry && !callsTools(entry.body)) return { entry, similarity };
      }
    } catch (error) {
      console.error('The semantic cache could not be searched; answering from the provider', error);
    }
    return undefined;
  }

  /**
   * Keeps an answer for its exact key and, unless it calls tools, under its last user message's
   * vector in `scope`. The exact entry is written first and names the semantic one, so a purge
   * always finds the vector: a crash between the two leaves a name without items, never items
   * without a name.
   */
  async remember(slot: CacheSlot, answer: AnswerToKeep, expiresAt: number, semantic: { scope: string; vector: Vector }): Promise<void> {
    if (callsTools(answer.body)) {
      await this.exact.remember(slot, answer, expiresAt);
      return;
    }
    const ref = semanticRefOf(semantic.scope, newId('sem'), semantic.vector);
    if (!(await this.exact.remember(slot, { ...answer, semanticRef: ref }, expiresAt))) return;
    try {
      await this.exact.store.putSemantic(slot.workspaceId, semantic.scope, {
        id: ref.id,
        vector: semantic.vector,
        answerRef: { partition: slot.partition, key: slot.key },
        expiresAt,
      });
    } catch (error) {
      console.error('An answer could not be indexed for the semantic cache', error);
    }
  }
}

/** Whether a chat completion answers with tool or function calls: valid for its own question only. */
function callsTools(body: Buffer): boolean {
  try {
    const answer = JSON.parse(body.toString('utf8')) as { choices?: Array<{ message?: { tool_calls?: unknown[]; function_call?: unknown } }> };
    return (answer.choices ?? []).some(({ message }) => (message?.tool_calls?.length ?? 0) > 0 || message?.function_call != null);
  } catch {
    // Not JSON we can read: do not share it by meaning.
    return true;
  }
}
