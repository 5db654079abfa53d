import { getCacheEntry, putCacheEntry, type CacheEntry } from './cache-entries';
import {
  deleteSemanticItems,
  findSemanticCandidates,
  putSemanticEntry,
  type SemanticCandidate,
  type SemanticEntry,
  type SemanticRef,
} from './semantic-entries';
import { getWorkspaceItem, type WorkspaceCacheSettings } from './workspaces';

/**
 * Where the response cache keeps answers: exact entries by request key, semantic entries by the
 * buckets of their vector, and the workspace's semantic settings. The state table and S3 hold them
 * (`dynamoAnswers`); tests of the cache step use the in-memory store of `memory/answers.ts`.
 */
export interface AnswerStore {
  /** The entry of a key, unless it expired by `now`. */
  get(workspaceId: string, partition: string, key: string, now: number): Promise<CacheEntry | undefined>;
  /** Stores an entry; answers the semantic entry of the one it replaced, when that is not the new one's own. */
  put(workspaceId: string, partition: string, key: string, entry: CacheEntry): Promise<SemanticRef | undefined>;
  /** Live semantic entries of a scope that may be near a vector with these bucket signatures (a store may give more). */
  findCandidates(workspaceId: string, scope: string, signatures: readonly string[]): Promise<SemanticCandidate[]>;
  putSemantic(workspaceId: string, scope: string, entry: SemanticEntry): Promise<void>;
  deleteSemantic(workspaceId: string, refs: readonly SemanticRef[]): Promise<void>;
  /** The workspace's semantic cache settings; undefined when it has none. */
  semanticSettings(workspaceId: string): Promise<WorkspaceCacheSettings | undefined>;
}

export const dynamoAnswers: AnswerStore = {
  get: getCacheEntry,
  put: putCacheEntry,
  findCandidates: (workspaceId, scope, signatures) => findSemanticCandidates(workspaceId, scope, signatures),
  putSemantic: putSemanticEntry,
  deleteSemantic: deleteSemanticItems,
  semanticSettings: async (workspaceId) => (await getWorkspaceItem(workspaceId))?.cache ?? undefined,
};
