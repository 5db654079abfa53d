import { maxLength, minLength, object, optional, pipe, refine, string, transform, unknown } from 'zod/mini';
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
import { movedSecretError, unboundSecretIssues } from '../config/secret-destinations';
import type { GatewayConfig } from '../config/types';
import { checkIssues } from '../guardrails/validate-checks';
import { GatewayError, notFound } from '../core/errors';
import { answerFields, controlRoutes, defineRoute, knownFields } from '../http/define-route';
import { listEnvelope, pageQuery } from '../http/pagination';

const configNotFound = (configId: string) => notFound(`No saved config ${configId.slice(0, 100)} in this workspace.`, 'config_not_found');

/**
 * `{configId}` as a reference (`cfg_…` or `cfg_…@<version>`); one that cannot name a config is a
 * 404 without a lookup. A write names the config itself (`method`), never a version: versions are
 * immutable.
 */
function configIdParam(method?: 'PUT' | 'DELETE') {
  return pipe(
    object({ configId: string() }),
    transform(({ configId }, context) => {
      const ref = parseConfigRef(configId);
      if (!ref) throw configNotFound(configId);
      if (method && ref.version !== undefined) {
        const message = `${method} takes the config id without a version (${ref.id}); versions are immutable.`;
        context.issues.push({ code: 'custom', message, input: configId, path: ['configId'], params: { code: 'invalid_config_id' } });
      }
      return { configId, ref };
    }),
  );
}

/** Largest config accepted, as JSON: the encrypted item must stay well below DynamoDB's 400 KB. */
const maxConfigBytes = 200 * 1024;
const invalidName = 'name must be a string of 1 to 255 characters.';

const configBody = knownFields(
  {
    name: optional(string(invalidName).check(minLength(1, invalidName), maxLength(255, invalidName))),
    config: unknown().check(
      refine((config) => config !== undefined, 'config is required: the config object to save.'),
      refine((config) => config === undefined || Buffer.byteLength(JSON.stringify(config)) <= maxConfigBytes, {
        error: `config is larger than ${maxConfigBytes / 1024} KB of JSON; split it or move large parts elsewhere.`,
        params: { code: 'config_too_large' },
      }),
    ),
    ...answerFields(['object', 'id', 'version', 'versions', 'created_at', 'updated_at', 'version_created_at']),
  },
  (field) => `Unknown field "${field}"; a saved config takes name and config.`,
);

/**
 * `/v1/configs`: saved configs, used as `x-gateway-config: cfg_…` (latest) or `cfg_…@<version>`.
 *
 * - `POST /v1/configs` `{name, config}` (admin) validates the config and stores it as version 1.
 * - `GET /v1/configs?limit=&after=` lists them newest first (without bodies).
 * - `GET /v1/configs/{configId}` answers the latest version; `{configId}@3` answers version 3.
 * - `PUT /v1/configs/{configId}` `{name?, config}` (admin) stores a new version; old ones stay
 *   readable. Secret fields sent back as the mask placeholder keep the latest version's value at the
 *   same JSON path, so an answer can be edited and sent back — unless its destination changed
 *   (400 `credentials_required`: moving a secret takes the secret).
 * - A target that stores a credential must name its provider, virtual_key or custom_host (400).
 * - `DELETE /v1/configs/{configId}` (admin) deletes the config with all its versions.
 *
 * Answers mask every `api_key`, `cloudA_secret_access_key`, `cloudA_session_token` and
 * `cloudB_service_account_json` in the tree.
 */
export const configsRoute = controlRoutes(
  defineRoute({
    method: 'POST',
    path: '/v1/configs',
    role: 'admin',
    body: configBody,
    invalidCode: 'invalid_config_body',
    async handler({ body }, { auth }) {
      const unresolved = maskedSecretPaths(body.config);
      if (unresolved.length > 0) throw maskedPlaceholderError(unresolved);
      const created = await createSavedConfig(auth.workspaceId, { name: body.name ?? 'Unnamed config', config: validate(body.config) });
      return present(created);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/configs',
    role: 'member',
    query: pageQuery(),
    handler: async ({ query }, { auth }) => listEnvelope(await listSavedConfigs(auth.workspaceId, query), presentSummary),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/configs/{configId}',
    role: 'member',
    params: configIdParam(),
    async handler({ params: { configId, ref } }, { auth }) {
      const found = await getSavedConfig(auth.workspaceId, ref);
      if (!found) throw configNotFound(configId);
      return present(found);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/v1/configs/{configId}',
    role: 'admin',
    params: configIdParam('PUT'),
    body: configBody,
    invalidCode: 'invalid_config_body',
    async handler({ params: { configId, ref }, body }, { auth }) {
      let config = body.config;
      let expectedVersion: number | undefined;
      if (maskedSecretPaths(config).length > 0) {
        // Fill placeholders from the latest version, and store only if it is still the latest.
        const latest = await getSavedConfig(auth.workspaceId, ref);
        if (!latest) throw configNotFound(configId);
        const restored = restoreMaskedSecrets(config, latest.config);
        if (restored.unresolved.length > 0) throw maskedPlaceholderError(restored.unresolved);
        if (restored.moved.length > 0) throw movedSecretError(restored.moved, 'provider, host, catalog entry or URL', maskedSecret);
        config = restored.config;
        expectedVersion = latest.version;
      }
      const valid = validate(config);
      const result = await updateSavedConfig(auth.workspaceId, ref.id, { name: body.name, config: valid }, { expectedVersion });
      if (result === 'not_found') throw configNotFound(configId);
      if (result === 'conflict') {
        throw new GatewayError(409, `Config ${ref.id} got a new version while this one was being stored; read it again and retry.`, {
          code: 'config_conflict',
        });
      }
      return present(result);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/configs/{configId}',
    role: 'admin',
    params: configIdParam('DELETE'),
    async handler({ params: { configId, ref } }, { auth }) {
      const deleted = await deleteSavedConfig(auth.workspaceId, ref.id);
      if (!deleted) throw configNotFound(configId);
      return { id: deleted.id, object: 'config', deleted: true };
    },
  }),
);

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

/** A config to store: valid, and every stored credential bound to where it goes. */
function validate(input: unknown): GatewayConfig {
  const result = parseConfig(input, checkIssues);
  if (!result.ok) throw configError(result.issues);
  const unbound = unboundSecretIssues(result.config);
  if (unbound.length > 0) throw configError(unbound);
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
