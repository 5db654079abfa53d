import { generateApiKeySecret, listApiKeys, putApiKey, revokeApiKey, type ApiKeyRecord, type Role } from '../auth/api-keys';
import { requireAdmin } from '../auth/authenticate';
import { badRequest, notFound } from '../http/errors';
import { readJsonObject } from '../http/json-body';
import { listEnvelope, readPageQuery } from '../http/pagination';
import type { RouteContext } from '../http/pipeline';
import { jsonResponse } from '../http/responses';
import type { GatewayResponse } from '../http/types';

const roles: readonly Role[] = ['admin', 'member'];

/** `/v1/api-keys`: create (POST), list (GET) and revoke (DELETE /{keyId}) gateway keys. Admin only. */
export async function apiKeysRoute({ request, auth }: RouteContext): Promise<GatewayResponse> {
  requireAdmin(auth);
  const keyId = request.pathParameters.keyId;
  if (request.method === 'POST' && !keyId) {
    const body = readJsonObject(request, { optional: true });
    const name = body.name ?? 'Unnamed key';
    if (typeof name !== 'string' || name.length > 255) throw badRequest('name must be a string of at most 255 characters.', 'name');
    const role = body.role ?? 'member';
    if (!roles.includes(role as Role)) throw badRequest(`role must be one of ${roles.join(', ')}.`, 'role');
    for (const field of Object.keys(body)) {
      if (field !== 'name' && field !== 'role') throw badRequest(`Unknown field "${field}"; a key takes name and role.`, field);
    }
    const secret = generateApiKeySecret();
    const record = await putApiKey(secret, { name, role: role as Role, organisation_id: auth.organisationId, workspace_id: auth.workspaceId });
    return jsonResponse(200, { ...present(record), key: secret });
  }
  if (request.method === 'GET' && !keyId) {
    const page = await listApiKeys(auth.workspaceId, readPageQuery(request.query));
    return jsonResponse(200, listEnvelope(page.data.map(present), page.has_more));
  }
  if (request.method === 'DELETE' && keyId) {
    const revoked = await revokeApiKey(auth.workspaceId, keyId);
    if (!revoked) throw notFound(`No API key with id ${keyId} in this workspace.`, 'api_key_not_found');
    return jsonResponse(200, { id: revoked.id, object: 'api_key', deleted: true, revoked_at: revoked.revoked_at });
  }
  throw notFound(`No route for ${request.method} ${request.path}.`, 'route_not_found');
}

function present(record: ApiKeyRecord) {
  return { object: 'api_key', ...record, revoked_at: record.revoked_at ?? null, status: record.revoked_at === undefined ? 'active' : 'revoked' };
}
