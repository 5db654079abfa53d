import { generateApiKeySecret, listApiKeys, putApiKey, revokeApiKey, type ApiKeyRecord, type Role } from '../auth/api-keys';
import { requireAdmin } from '../auth/authenticate';
import { badRequest, notFound } from '../core/errors';
import { readJsonObject } from '../http/json-body';
import { listEnvelope, readPageQuery } from '../http/pagination';
import type { RouteContext } from '../http/pipeline';
import { jsonResponse } from '../http/responses';
import type { GatewayResponse } from '../http/types';

const roles: readonly Role[] = ['admin', 'member'];
/** Key ids are `key_` and 26 base32 characters; anything else names no key and is not looked up. */
const keyIdPattern = /^key_[0-9a-z]{1,64}$/;
const bodyShape = '{"name": "<1 to 255 characters>", "role": "admin" | "member"} (role defaults to member)';

/** `/v1/api-keys`: create (POST), list (GET) and revoke (DELETE /{keyId}) gateway keys. Admin only. */
export async function apiKeysRoute({ request, auth }: RouteContext): Promise<GatewayResponse> {
  requireAdmin(auth);
  const keyId = request.pathParameters.keyId;
  if (request.method === 'POST' && !keyId) {
    const { name, role } = readKeyBody(readJsonObject(request, { optional: true }));
    const secret = generateApiKeySecret();
    const record = await putApiKey(secret, { name, role, organisation_id: auth.organisationId, workspace_id: auth.workspaceId });
    return jsonResponse(200, { ...present(record), key: secret });
  }
  if (request.method === 'GET' && !keyId) {
    const page = await listApiKeys(auth.workspaceId, readPageQuery(request.query));
    return jsonResponse(200, listEnvelope(page.data.map(present), page.has_more));
  }
  if (request.method === 'DELETE' && keyId) {
    const revoked = keyIdPattern.test(keyId) ? await revokeApiKey(auth.workspaceId, keyId) : undefined;
    if (!revoked) throw notFound(`No API key with id ${keyId.slice(0, 100)} in this workspace.`, 'api_key_not_found');
    return jsonResponse(200, { id: revoked.id, object: 'api_key', deleted: true, revoked_at: revoked.revoked_at });
  }
  throw notFound(`No route for ${request.method} ${request.path}.`, 'route_not_found');
}

function present(record: ApiKeyRecord) {
  return { object: 'api_key', ...record, revoked_at: record.revoked_at ?? null, status: record.revoked_at === undefined ? 'active' : 'revoked' };
}

/** A new key's fields: `name` is required, so every key in a listing says what it is for. */
function readKeyBody(body: Record<string, unknown>): { name: string; role: Role } {
  for (const field of Object.keys(body)) {
    if (field !== 'name' && field !== 'role') throw invalidBody(`Unknown field "${field.slice(0, 100)}"; send ${bodyShape}.`, field.slice(0, 100));
  }
  const { name, role = 'member' } = body;
  if (name === undefined) throw invalidBody(`name is required: send ${bodyShape}.`, 'name');
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > 255) {
    throw invalidBody(`name must be a non-blank string of at most 255 characters; send ${bodyShape}.`, 'name');
  }
  if (!roles.includes(role as Role)) throw invalidBody(`role must be one of ${roles.join(', ')}.`, 'role');
  return { name, role: role as Role };
}

const invalidBody = (message: string, param: string) => badRequest(message, param, 'invalid_api_key_body');
