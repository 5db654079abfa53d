import { requireAdmin } from '../auth/authenticate';
import {
  createSavedConfig,
  deleteSavedConfig,
  getSavedConfig,
  listSavedConfigs,
  maskConfigSecrets,
  maskedSecret,
  maskedSecretPaths,
  parseConfigRef,
  restoreMaskedSecrets,
  updateSavedConfig,
  type SavedConfig,
  type SavedConfigSummary,
} from '../config/saved-configs';
import { configError, parseConfig } from '../config/schema';
import type { GatewayConfig } from '../config/types';
import { badRequest, GatewayError, notFound } from '../core/errors';
import { readJsonObject } from '../http/json-body';
import { listEnvelope, readPageQuery } from '../http/pagination';
import type { RouteContext } from '../http/pipeline';
import { jsonResponse } from '../http/responses';
import type { GatewayResponse } from '../http/types';

/**
 * `/v1/configs`: saved configs, used as `x-gateway-config: cfg_…` (latest) or `cfg_…@<version>`.
 *
 * - `POST /v1/configs` `{name, config}` (admin) validates the config and stores it as version 1.
 * - `GET /v1/configs?limit=&after=` lists them newest first (without bodies).
 * - `GET /v1/configs/{configId}` answers the latest version; `{configId}@3` answers version 3.
 * - `PUT /v1/configs/{configId}` `{name?, config}` (admin) stores a new version; old ones stay
 *   readable. Secret fields sent back as the mask placeholder keep the latest version's value at the
 *   same JSON path, so an answer can be edited and sent back.
 * - `DELETE /v1/configs/{configId}` (admin) deletes the config with all its versions.
 *
 * Answers mask every `api_key`, `cloudA_secret_access_key`, `cloudA_session_token` and
 * `cloudB_service_account_json` in the tree.
 */
export async function configsRoute({ request, auth }: RouteContext): Promise<GatewayResponse> {
  const configId = request.pathParameters.configId;
  if (request.method === 'POST' && configId === undefined) {
    requireAdmin(auth);
    const input = readConfigBody(readJsonObject(request), { requireName: false });
    const unresolved = maskedSecretPaths(input.config);
    if (unresolved.length > 0) throw maskedPlaceholderError(unresolved);
    const created = await createSavedConfig(auth.workspaceId, { name: input.name ?? 'Unnamed config', config: validate(input.config) });
    return jsonResponse(200, present(created));
  }
  if (request.method === 'GET' && configId === undefined) {
    const page = await listSavedConfigs(auth.workspaceId, readPageQuery(request.query));
    return jsonResponse(200, listEnvelope(page.data.map(presentSummary), page.has_more));
  }
  if (configId !== undefined && ['GET', 'PUT', 'DELETE'].includes(request.method)) {
    const ref = parseConfigRef(configId);
    if (request.method === 'GET') {
      const found = ref ? await getSavedConfig(auth.workspaceId, ref) : undefined;
      if (!found) throw configNotFound(configId);
      return jsonResponse(200, present(found));
    }
    requireAdmin(auth);
    if (!ref) throw configNotFound(configId);
    if (ref.version !== undefined) {
      throw badRequest(`${request.method} takes the config id without a version (${ref.id}); versions are immutable.`, 'configId', 'invalid_config_id');
    }
    if (request.method === 'PUT') {
      const input = readConfigBody(readJsonObject(request), { requireName: false });
      let config = input.config;
      let expectedVersion: number | undefined;
      if (maskedSecretPaths(config).length > 0) {
        // Fill placeholders from the latest version, and store only if it is still the latest.
        const latest = await getSavedConfig(auth.workspaceId, ref);
        if (!latest) throw configNotFound(configId);
        const restored = restoreMaskedSecrets(config, latest.config);
        if (restored.unresolved.length > 0) throw maskedPlaceholderError(restored.unresolved);
        config = restored.config;
        expectedVersion = latest.version;
      }
      const valid = validate(config);
      const result = await updateSavedConfig(auth.workspaceId, ref.id, { name: input.name, config: valid }, { expectedVersion });
      if (result === 'not_found') throw configNotFound(configId);
      if (result === 'conflict') {
        throw new GatewayError(409, `Config ${ref.id} got a new version while this one was being stored; read it again and retry.`, { code: 'config_conflict' });
      }
      return jsonResponse(200, present(result));
    }
    const deleted = await deleteSavedConfig(auth.workspaceId, ref.id);
    if (!deleted) throw configNotFound(configId);
    return jsonResponse(200, { id: deleted.id, object: 'config', deleted: true });
  }
  throw notFound(`No route for ${request.method} ${request.path}.`, 'route_not_found');
}

const configNotFound = (configId: string) => notFound(`No saved config ${configId.slice(0, 100)} in this workspace.`, 'config_not_found');

function present(saved: SavedConfig) {
  return {
    object: 'config',
    id: saved.id,
    name: saved.name,
    version: saved.version,
    config: maskConfigSecrets(saved.config),
    versions: saved.versions,
    created_at: saved.created_at,
    updated_at: saved.updated_at,
    version_created_at: saved.version_created_at,
  };
}

function presentSummary(summary: SavedConfigSummary) {
  return { object: 'config', ...summary };
}

// ---------------------------------------------------------------------------------------------
// Input

/** Largest config accepted, as JSON: the encrypted item must stay well below DynamoDB's 400 KB. */
const maxConfigBytes = 200 * 1024;
/** Fields of an answer that may come back in an edited body; ignored. */
const readOnlyFields = new Set(['object', 'id', 'version', 'versions', 'created_at', 'updated_at', 'version_created_at']);

function readConfigBody(body: Record<string, unknown>, options: { requireName: boolean }): { name?: string; config: unknown } {
  for (const field of Object.keys(body)) {
    if (field !== 'name' && field !== 'config' && !readOnlyFields.has(field)) {
      throw badRequest(`Unknown field "${field}"; a saved config takes name and config.`, field, 'invalid_config_body');
    }
  }
  const name = body.name;
  if ((name !== undefined || options.requireName) && (typeof name !== 'string' || name.length === 0 || name.length > 255)) {
    throw badRequest('name must be a string of 1 to 255 characters.', 'name', 'invalid_config_body');
  }
  if (body.config === undefined) throw badRequest('config is required: the config object to save.', 'config', 'invalid_config_body');
  if (Buffer.byteLength(JSON.stringify(body.config)) > maxConfigBytes) {
    throw badRequest(`config is larger than ${maxConfigBytes / 1024} KB of JSON; split it or move large parts elsewhere.`, 'config', 'config_too_large');
  }
  return { name: name as string | undefined, config: body.config };
}

function validate(input: unknown): GatewayConfig {
  const result = parseConfig(input);
  if (!result.ok) throw configError(result.issues);
  return result.config;
}

function maskedPlaceholderError(paths: string[]): GatewayError {
  return configError(
    paths.map((param) => ({
      param,
      message: `is the mask placeholder "${maskedSecret}" that answers show instead of the secret, and there is no stored value at this path to keep; send the real value`,
    })),
  );
}
