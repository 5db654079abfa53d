import { normalise } from '../../core/semantic-index';
import type { AnswerStore } from '../answer-store';
import type { CacheEntry } from '../cache-entries';
import type { SemanticCandidate, SemanticRef } from '../semantic-entries';
import type { WorkspaceCacheSettings } from '../workspaces';

/**
 * The response cache's store in memory, for unit tests of the cache step. As the table does, it
 * answers an expired entry as a miss, hands back the semantic entry a replaced answer pointed to,
 * and gives callers copies. Its candidates are every live entry of the scope, a superset of the
 * table's buckets: the similarity threshold decides either way. `settings` sets a workspace's
 * semantic settings, as an admin does on the workspace.
 */
export function memoryAnswers(): AnswerStore & {
  settings: Map<string, WorkspaceCacheSettings>;
  /** Entries stored, expired ones included. */
  entries(): number;
} {
  const exact = new Map<string, CacheEntry>();
  const semantic = new Map<string, Map<string, SemanticCandidate>>();
  const settings = new Map<string, WorkspaceCacheSettings>();
  const scopeId = (workspaceId: string, scope: string) => `${workspaceId}\n${scope}`;
  const copy = (entry: CacheEntry): CacheEntry => ({ ...entry, body: Buffer.from(entry.body), headers: { ...entry.headers } });

  return {
    settings,
    entries: () => exact.size,

    async get(workspaceId, partition, key, now) {
      const entry = exact.get(`${workspaceId}\n${partition}\n${key}`);
      return entry && entry.expiresAt > now ? copy(entry) : undefined;
    },

    async put(workspaceId, partition, key, entry) {
      const id = `${workspaceId}\n${partition}\n${key}`;
      const replaced: SemanticRef | undefined = exact.get(id)?.semanticRef;
      exact.set(id, copy(entry));
      return replaced && replaced.id !== entry.semanticRef?.id ? replaced : undefined;
    },

    async findCandidates(workspaceId, scope) {
      const now = Date.now();
      return [...(semantic.get(scopeId(workspaceId, scope))?.values() ?? [])].filter((candidate) => candidate.expiresAt > now);
    },

    async putSemantic(workspaceId, scope, entry) {
      const id = scopeId(workspaceId, scope);
      if (!semantic.has(id)) semantic.set(id, new Map());
      semantic.get(id)!.set(entry.id, { id: entry.id, vector: normalise(entry.vector), answerRef: { ...entry.answerRef }, expiresAt: entry.expiresAt });
    },

    async deleteSemantic(workspaceId, refs) {
      for (const ref of refs) semantic.get(scopeId(workspaceId, ref.scope))?.delete(ref.id);
    },

    async semanticSettings(workspaceId) {
      return settings.get(workspaceId);
    },
  };
}
