import { _default, enum as oneOf, nullable, number, object, optional, pipe, refine, string, transform } from 'zod/mini';
import { requireOwner } from '../auth/authenticate';
import { findProviderIntegration } from '../catalog/providers';
import { findProvider } from '../providers/registry';
import {
  changeWorkspace,
  createWorkspace,
  findWorkspace,
  listWorkspaces,
  workspaceIdPattern,
  type WorkspaceRecord,
  type WorkspaceStatus,
} from '../auth/workspaces';
import { badRequest, GatewayError, notFound } from '../core/errors';
import type { AuthContext } from '../auth/authenticate';
import { controlRoutes, defineRoute, knownFields } from '../http/define-route';
import { listEnvelope, pageQuery } from '../http/pagination';

const statuses: readonly [WorkspaceStatus, ...WorkspaceStatus[]] = ['active', 'archived'];
const createShape = '{"name": "<1 to 255 characters>", "description": "<optional, at most 1,000 characters>"}';
const changeShape =
  '{"name"?, "description"?, "status"?: "active" | "archived", "cache"?: {"embedding_provider": "@slug", "embedding_model", "similarity_threshold"?}}';
const cacheShape =
  '{"embedding_provider": "@<catalog slug>", "embedding_model": "<model>", "similarity_threshold": <above 0, at most 1; default 0.95>} or null';

const name = (shape: string) =>
  string({ error: (issue) => (issue.input === undefined ? `name is required: send ${shape}.` : `name must be a string; send ${shape}.`) }).check(
    refine((value) => value.trim().length > 0 && value.length <= 255, 'name must be a non-blank string of at most 255 characters.'),
  );
const description = nullable(
  string('description must be a string or null.').check(refine((value) => value.length <= 1000, 'description must be at most 1,000 characters.')),
);

const newWorkspace = knownFields(
  { name: name(createShape), description: optional(description) },
  (field) => `Unknown field "${field.slice(0, 100)}"; send ${createShape}.`,
);
/** The semantic cache's settings: which catalog provider and model embed, and how alike is alike enough. */
const cacheSettings = nullable(
  knownFields(
    {
      embedding_provider: string(`cache.embedding_provider is required: send ${cacheShape}.`).check(
        refine((value) => /^@[a-z0-9-]{1,64}$/.test(value), 'cache.embedding_provider must be a catalog provider of this workspace, as @<slug>.'),
      ),
      embedding_model: string(`cache.embedding_model is required: send ${cacheShape}.`).check(
        refine((value) => value.trim().length > 0 && value.length <= 200, 'cache.embedding_model must be a non-blank model name of at most 200 characters.'),
      ),
      similarity_threshold: _default(
        number('cache.similarity_threshold must be a number above 0 and at most 1.').check(
          refine((value) => value > 0 && value <= 1, 'cache.similarity_threshold must be above 0 and at most 1.'),
        ),
        0.95,
      ),
    },
    (field, at) => `Unknown field "${field.slice(0, 100)}" in ${at}; send ${cacheShape}.`,
  ),
);

const workspaceChange = knownFields(
  {
    name: optional(name(changeShape)),
    description: optional(description),
    status: optional(oneOf(statuses, 'status must be "active" or "archived".')),
    cache: optional(cacheSettings),
  },
  (field) => `Unknown field "${field.slice(0, 100)}"; send ${changeShape}.`,
);

/** `?status=active,archived` (default `active`): the statuses a listing includes. */
const listQuery = object({
  ...pageQuery().shape,
  status: optional(
    string().check(
      refine(
        (value) => value.split(',').every((status) => (statuses as readonly string[]).includes(status.trim())),
        'status must be active, archived, or both separated by a comma (active,archived).',
      ),
    ),
  ),
});

/** `{workspaceId}`: one that cannot name a workspace is a 404 without a lookup. */
const workspacePath = pipe(
  object({ workspaceId: string() }),
  transform(({ workspaceId }) => {
    if (!workspaceIdPattern.test(workspaceId)) throw workspaceNotFound(workspaceId);
    return { workspaceId };
  }),
);

/**
 * `/v1/workspaces`: the organisation's workspaces. Owners create, change and archive them and see
 * them all; every other key sees only its own workspace (admins may ask for archived ones too).
 */
export const workspacesRoute = controlRoutes(
  defineRoute({
    method: 'POST',
    path: '/v1/workspaces',
    role: 'owner',
    body: newWorkspace,
    invalidCode: 'invalid_workspace_body',
    handler: async ({ body }, { auth }) =>
      present(await createWorkspace({ organisationId: auth.organisationId, name: body.name.trim(), description: body.description ?? undefined })),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/workspaces',
    role: 'member',
    query: listQuery,
    invalidCode: 'invalid_query',
    async handler({ query }, { auth }) {
      const wanted = query.status ? [...new Set(query.status.split(',').map((status) => status.trim() as WorkspaceStatus))] : (['active'] as WorkspaceStatus[]);
      if (wanted.includes('archived') && auth.role === 'member') {
        throw new GatewayError(403, 'Listing archived workspaces needs an admin or owner key.', { code: 'admin_required' });
      }
      const visible = auth.role === 'owner' ? await listWorkspaces(auth.organisationId, wanted) : await ownWorkspace(auth, wanted);
      // Newest first by time-sortable id, as every listing: a page continues below the cursor.
      const rest = query.after ? visible.filter((workspace) => workspace.id < query.after!) : visible;
      const page = { data: rest.slice(0, query.limit), has_more: rest.length > query.limit };
      return { ...listEnvelope(page, present), total: visible.length };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/workspaces/{workspaceId}',
    role: 'member',
    params: workspacePath,
    handler: async ({ params: { workspaceId } }, { auth }) => present(await visibleWorkspace(auth, workspaceId)),
  }),
  defineRoute({
    method: 'PUT',
    path: '/v1/workspaces/{workspaceId}',
    // Admins set their own workspace's cache settings; everything else about a workspace is the owner's.
    role: 'admin',
    params: workspacePath,
    body: workspaceChange,
    invalidCode: 'invalid_workspace_body',
    async handler({ params: { workspaceId }, body }, { auth }) {
      const { cache, ...identity } = body;
      if (identity.name === undefined && identity.description === undefined && identity.status === undefined && cache === undefined) {
        throw badRequest(`Nothing to change; send ${changeShape}.`, null, 'invalid_workspace_body');
      }
      if (identity.name !== undefined || identity.description !== undefined || identity.status !== undefined)
        requireOwner(auth, "change a workspace's name, description or status");
      if (auth.role !== 'owner' && workspaceId !== auth.workspaceId) throw workspaceNotFound(workspaceId);
      if (cache) await checkEmbeddingProvider(workspaceId, cache.embedding_provider);
      const changed = await changeWorkspace(auth.organisationId, workspaceId, {
        name: identity.name?.trim(),
        description: identity.description,
        status: identity.status,
        cache,
      });
      if (!changed) throw workspaceNotFound(workspaceId);
      return present(changed);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/workspaces/{workspaceId}',
    role: 'owner',
    params: workspacePath,
    async handler({ params: { workspaceId } }, { auth }) {
      const archived = await changeWorkspace(auth.organisationId, workspaceId, { status: 'archived' });
      if (!archived) throw workspaceNotFound(workspaceId);
      return present(archived);
    },
  }),
);

/** The caller's own workspace, when its status is one of `wanted`. */
async function ownWorkspace(auth: AuthContext, wanted: readonly WorkspaceStatus[]): Promise<WorkspaceRecord[]> {
  const own = await findWorkspace(auth.organisationId, auth.workspaceId);
  return own && wanted.includes(own.status) ? [own] : [];
}

/** Owners see every workspace of their organisation; other keys only their own, and nothing else exists for them. */
async function visibleWorkspace(auth: AuthContext, workspaceId: string): Promise<WorkspaceRecord> {
  const found = auth.role === 'owner' || workspaceId === auth.workspaceId ? await findWorkspace(auth.organisationId, workspaceId) : undefined;
  if (!found) throw workspaceNotFound(workspaceId);
  return found;
}

/** The embedding provider must be a catalog entry of the workspace whose provider serves embeddings. */
async function checkEmbeddingProvider(workspaceId: string, reference: string): Promise<void> {
  const integration = await findProviderIntegration(workspaceId, reference.slice(1));
  if (!integration) {
    throw badRequest(
      `cache.embedding_provider ${reference} is not in this workspace's provider catalog; create it with POST /v1/providers first.`,
      'cache.embedding_provider',
      'unknown_provider',
    );
  }
  if (!findProvider(integration.provider)?.operations.includes('embeddings')) {
    throw badRequest(
      `cache.embedding_provider ${reference} is a ${integration.provider} provider, which serves no embeddings.`,
      'cache.embedding_provider',
      'unsupported_operation',
    );
  }
}

function workspaceNotFound(id: string): GatewayError {
  return notFound(`No workspace with id ${id.slice(0, 100)} in this organisation.`, 'workspace_not_found');
}

function present(record: WorkspaceRecord) {
  return { object: 'workspace', ...record };
}
