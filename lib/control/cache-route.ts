import { object, optional, refine, string } from 'zod/mini';
import { namespacePartition } from '../cache/cache-key';
import { controlRoutes, defineRoute } from '../http/define-route';
import { purgeCacheEntries } from '../store/cache-entries';

const namespaceRule = 'namespace must be 1 to 1,000 characters: the x-gateway-cache-namespace whose entries to delete.';

/**
 * `DELETE /v1/cache[?namespace=]`: deletes the cached answers of the caller's workspace, or only
 * those stored under one `x-gateway-cache-namespace`. Entries stored without a namespace sit in
 * partitions derived from metadata and provider credentials, so they go with the whole workspace.
 */
export const cacheRoute = controlRoutes(
  defineRoute({
    method: 'DELETE',
    path: '/v1/cache',
    role: 'admin',
    query: object({ namespace: optional(string(namespaceRule).check(refine((value) => value.length >= 1 && value.length <= 1000, namespaceRule))) }),
    invalidCode: 'invalid_query',
    async handler({ query: { namespace } }, { auth }) {
      const deleted = await purgeCacheEntries(auth.workspaceId, namespace === undefined ? undefined : namespacePartition(namespace));
      return { object: 'cache.purge', deleted, namespace: namespace ?? null };
    },
  }),
);
