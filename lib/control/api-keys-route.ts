import { _default, enum as oneOf, object, optional, refine, string } from 'zod/mini';
import { generateApiKeySecret, listApiKeys, putApiKey, type ApiKeyRecord, type Role } from '../auth/api-keys';
import { requireOwner } from '../auth/authenticate';
import { revokeApiKey } from '../auth/owner-keys';
import { findWorkspace, workspaceIdPattern } from '../auth/workspaces';
import { badRequest, GatewayError, notFound } from '../core/errors';
import { controlRoutes, defineRoute, knownFields } from '../http/define-route';
import { listEnvelope, pageQuery } from '../http/pagination';

const roles: readonly [Role, ...Role[]] = ['owner', 'admin', 'member'];
/** Key ids are `key_` and 26 base32 characters; anything else names no key and is not looked up. */
const keyIdPattern = /^key_[0-9a-z]{1,64}$/;
const bodyShape =
  '{"name": "<1 to 255 characters>", "role": "admin" | "member"} (role defaults to member; an owner key may also send "role": "owner" and "workspace_id": "<a workspace of the organisation>")';
const invalidName = `name must be a non-blank string of at most 255 characters; send ${bodyShape}.`;

/** A new key's fields: `name` is required, so every key in a listing says what it is for. */
const newKey = knownFields(
  {
    name: string({ error: (issue) => (issue.input === undefined ? `name is required: send ${bodyShape}.` : invalidName) }).check(
      refine((name) => name.trim().length > 0 && name.length <= 255, invalidName),
    ),
    role: _default(oneOf(roles, `role must be one of ${roles.join(', ')}.`), 'member'),
    workspace_id: optional(string('workspace_id must be the id of a workspace, e.g. "ws_01jd3…".')),
  },
  (field) => `Unknown field "${field.slice(0, 100)}"; send ${bodyShape}.`,
);

/** `/v1/api-keys`: create, list and revoke gateway keys. Admin only; owner keys are owners' to create and revoke. */
export const apiKeysRoute = controlRoutes(
  defineRoute({
    method: 'POST',
    path: '/v1/api-keys',
    role: 'admin',
    body: newKey,
    emptyBodyAllowed: true,
    invalidCode: 'invalid_api_key_body',
    async handler({ body: { name, role, workspace_id: workspaceId } }, { auth }) {
      if (role === 'owner') requireOwner(auth, 'create an owner key');
      if (workspaceId !== undefined) requireOwner(auth, 'create a key for a workspace (workspace_id)');
      const workspace = workspaceId === undefined ? auth.workspaceId : await activeWorkspace(auth.organisationId, workspaceId);
      const secret = generateApiKeySecret();
      const record = await putApiKey(secret, { name, role, organisation_id: auth.organisationId, workspace_id: workspace });
      return { ...present(record), key: secret };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/api-keys',
    role: 'admin',
    query: pageQuery(),
    handler: async ({ query }, { auth }) => listEnvelope(await listApiKeys(auth.workspaceId, query), present),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/api-keys/{keyId}',
    role: 'admin',
    params: object({ keyId: string() }),
    async handler({ params: { keyId } }, { auth }) {
      const revoked = keyIdPattern.test(keyId) ? await revokeApiKey(auth, keyId) : undefined;
      if (!revoked) throw notFound(`No API key with id ${keyId.slice(0, 100)} in this workspace.`, 'api_key_not_found');
      return { id: revoked.id, object: 'api_key', deleted: true, revoked_at: revoked.revoked_at };
    },
  }),
);

/** The workspace a new key goes to: one of the organisation's, and not archived (its keys would not work). */
async function activeWorkspace(organisationId: string, workspaceId: string): Promise<string> {
  const workspace = workspaceIdPattern.test(workspaceId) ? await findWorkspace(organisationId, workspaceId) : undefined;
  if (!workspace)
    throw badRequest(
      `workspace_id ${workspaceId.slice(0, 100)} is not a workspace of this organisation; see GET /v1/workspaces.`,
      'workspace_id',
      'workspace_not_found',
    );
  if (workspace.status === 'archived') {
    throw new GatewayError(
      409,
      `Workspace ${workspace.id} is archived, so its keys would not work; make it active again with PUT /v1/workspaces/${workspace.id} {"status": "active"} first.`,
      {
        param: 'workspace_id',
        code: 'workspace_archived',
      },
    );
  }
  return workspace.id;
}

function present(record: ApiKeyRecord) {
  return { object: 'api_key', ...record, revoked_at: record.revoked_at ?? null, status: record.revoked_at === undefined ? 'active' : 'revoked' };
}
