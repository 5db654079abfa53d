import { requireAdmin } from '../auth/authenticate';
import {
  createProviderIntegration,
  deleteProviderIntegration,
  getProviderIntegration,
  listProviderIntegrations,
  ProviderDestinationChangeError,
  ProviderSlugTakenError,
  slugPattern,
  updateProviderIntegration,
  type CredentialField,
  type ProviderCredentials,
  type ProviderIntegrationSummary,
  type ProviderSettings,
  type SettingField,
} from '../catalog/providers';
import { parseCustomHost } from '../inference/target';
import { secretCredentialFields, settingFields } from '../providers/provider-fields';
import { badRequest, GatewayError, notFound } from '../core/errors';
import { readJsonObject } from '../http/json-body';
import { listEnvelope, readPageQuery } from '../http/pagination';
import type { RouteContext } from '../http/pipeline';
import { jsonResponse } from '../http/responses';
import type { GatewayResponse } from '../http/types';
import { findProvider, providerNames } from '../providers/registry';

/**
 * `/v1/providers`: the workspace's provider catalog.
 *
 * - `POST /v1/providers` creates an integration (admin): `slug`, `provider`, `name`, optional
 *   `custom_host`, settings (regions, deployments, …) and credentials (`api_key`, cloud secrets).
 * - `GET /v1/providers?limit=&after=` lists them newest first; `GET /v1/providers/{slug}` shows one.
 * - `PUT /v1/providers/{slug}` (admin) replaces the non-secret fields (absent ones are cleared; the
 *   body is the full representation, so a GET answer can be edited and sent back) and replaces the
 *   credential set only when the body has at least one credential field (`null` removes one).
 * - `DELETE /v1/providers/{slug}` (admin).
 *
 * Answers never contain credential values: `credentials` maps each credential that is set to
 * `"set"` or a masked hint.
 */
export async function providersRoute({ request, auth }: RouteContext): Promise<GatewayResponse> {
  const slug = request.pathParameters.slug;
  if (request.method === 'POST' && slug === undefined) {
    requireAdmin(auth);
    const input = readIntegration(readJsonObject(request), { slugFromPath: undefined });
    try {
      const created = await createProviderIntegration(auth.workspaceId, { ...input, credentials: input.credentials ?? {} });
      return jsonResponse(200, present(created));
    } catch (error) {
      if (error instanceof ProviderSlugTakenError) {
        throw new GatewayError(409, `${error.message} Choose another slug, or change that integration with PUT /v1/providers/${input.slug}.`, {
          param: 'slug',
          code: 'provider_slug_taken',
        });
      }
      throw error;
    }
  }
  if (request.method === 'GET' && slug === undefined) {
    const page = await listProviderIntegrations(auth.workspaceId, readPageQuery(request.query));
    return jsonResponse(200, listEnvelope(page.data.map(present), page.has_more));
  }
  if (slug !== undefined && ['GET', 'PUT', 'DELETE'].includes(request.method)) {
    if (request.method === 'GET') {
      const found = await getProviderIntegration(auth.workspaceId, slug);
      if (!found) throw integrationNotFound(slug);
      return jsonResponse(200, present(found));
    }
    requireAdmin(auth);
    if (request.method === 'PUT') {
      const input = readIntegration(readJsonObject(request), { slugFromPath: slug });
      const updated = slugPattern.test(slug) ? await updateProviderIntegration(auth.workspaceId, slug, input).catch(credentialsRequired) : undefined;
      if (!updated) throw integrationNotFound(slug);
      return jsonResponse(200, present(updated));
    }
    const deleted = slugPattern.test(slug) ? await deleteProviderIntegration(auth.workspaceId, slug) : undefined;
    if (!deleted) throw integrationNotFound(slug);
    return jsonResponse(200, { id: deleted.id, slug: deleted.slug, object: 'provider', deleted: true });
  }
  throw notFound(`No route for ${request.method} ${request.path}.`, 'route_not_found');
}

function credentialsRequired(error: unknown): never {
  if (error instanceof ProviderDestinationChangeError) {
    throw badRequest(
      `${error.message} Stored credentials only ever travel to the host stored with them: send ${secretCredentialFields.join(' / ')} (whichever the provider uses) in the same PUT, or create a new integration for the other host.`,
      'custom_host',
      'credentials_required',
    );
  }
  throw error;
}

const integrationNotFound = (slug: string) =>
  notFound(`No provider integration with slug "${slug.slice(0, 100)}" in this workspace.`, 'provider_not_found');

function present(summary: ProviderIntegrationSummary) {
  return {
    object: 'provider',
    id: summary.id,
    slug: summary.slug,
    provider: summary.provider,
    name: summary.name,
    custom_host: summary.custom_host ?? null,
    ...summary.settings,
    credentials: summary.credential_hints,
    created_at: summary.created_at,
    updated_at: summary.updated_at,
  };
}

// ---------------------------------------------------------------------------------------------
// Input

/** Fields of an answer that a request may carry back (edit-and-PUT) and that are ignored. */
const readOnlyFields = new Set(['object', 'id', 'workspace_id', 'credentials', 'created_at', 'updated_at']);
const maxSecretLength = 16 * 1024;
const maxSettingLength = 1024;

interface IntegrationInput {
  slug: string;
  provider: string;
  name: string;
  custom_host?: string;
  settings: ProviderSettings;
  /** Undefined when the body has no credential field at all. */
  credentials?: ProviderCredentials;
}

function readIntegration(body: Record<string, unknown>, options: { slugFromPath: string | undefined }): IntegrationInput {
  const known = new Set<string>(['slug', 'provider', 'name', 'custom_host', ...settingFields, ...secretCredentialFields]);
  for (const field of Object.keys(body)) {
    if (!known.has(field) && !readOnlyFields.has(field)) {
      throw badRequest(
        `Unknown field "${field}". A provider integration takes slug, provider, name, custom_host, credentials (${secretCredentialFields.join(', ')}) and settings (${settingFields.join(', ')}).`,
        field,
        'invalid_provider_integration',
      );
    }
  }

  let slug: string;
  if (options.slugFromPath === undefined) {
    if (typeof body.slug !== 'string' || !slugPattern.test(body.slug)) {
      throw badRequest('slug is required: 1 to 64 lowercase letters, digits or hyphens (it is used as @slug in x-gateway-provider).', 'slug', 'invalid_provider_integration');
    }
    slug = body.slug;
  } else {
    slug = options.slugFromPath;
    if (body.slug !== undefined && body.slug !== slug) {
      throw badRequest(`slug cannot be changed (the path names "${slug.slice(0, 100)}"); create a new integration instead.`, 'slug', 'invalid_provider_integration');
    }
  }

  if (typeof body.provider !== 'string' || body.provider.length === 0) {
    throw badRequest(`provider is required: one of ${providerNames.join(', ')}.`, 'provider', 'invalid_provider_integration');
  }
  const provider = findProvider(body.provider);
  if (!provider) {
    throw badRequest(`Unknown provider "${body.provider.slice(0, 100)}"; use one of ${providerNames.join(', ')}.`, 'provider', 'unknown_provider');
  }

  const name = body.name ?? slug;
  if (typeof name !== 'string' || name.length === 0 || name.length > 255) {
    throw badRequest('name must be a string of 1 to 255 characters.', 'name', 'invalid_provider_integration');
  }

  const input: IntegrationInput = { slug, provider: provider.name, name, settings: readSettings(body) };
  if (body.custom_host !== undefined && body.custom_host !== null) {
    if (typeof body.custom_host !== 'string') throw badRequest('custom_host must be a string: the provider base URL, e.g. https://models.example.com/v1.', 'custom_host', 'invalid_custom_host');
    try {
      input.custom_host = parseCustomHost(body.custom_host);
    } catch (error) {
      if (error instanceof GatewayError) throw badRequest(`custom_host is not a usable provider base URL: ${error.message}`, 'custom_host', 'invalid_custom_host');
      throw error;
    }
  }
  const credentials = readCredentials(body);
  if (credentials) input.credentials = credentials;
  return input;
}

function readSettings(body: Record<string, unknown>): ProviderSettings {
  const settings: Record<string, unknown> = {};
  for (const field of settingFields) {
    const value = body[field];
    if (value === undefined || value === null) continue;
    settings[field] = field === 'deployments' ? readDeployments(value) : readSettingString(field, value);
  }
  return settings as ProviderSettings;
}

function readSettingString(field: SettingField, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxSettingLength) {
    throw badRequest(`${field} must be a non-empty string of at most ${maxSettingLength} characters.`, field, 'invalid_provider_integration');
  }
  if (field === 'cloudC_deployment_type' && value !== 'serverless' && value !== 'managed') {
    throw badRequest('cloudC_deployment_type must be "serverless" or "managed".', field, 'invalid_provider_integration');
  }
  return value;
}

function readDeployments(value: unknown): ProviderSettings['deployments'] {
  if (!Array.isArray(value) || value.length > 100) {
    throw badRequest('deployments must be an array of at most 100 {deployment_id, alias, api_version, is_default} objects.', 'deployments', 'invalid_provider_integration');
  }
  return value.map((item, index) => {
    const param = `deployments[${index}]`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw badRequest(`${param} must be an object.`, param, 'invalid_provider_integration');
    const entry = item as Record<string, unknown>;
    for (const key of Object.keys(entry)) {
      if (!['deployment_id', 'alias', 'api_version', 'is_default'].includes(key)) {
        throw badRequest(`Unknown field "${key}" in ${param}; a deployment takes deployment_id, alias, api_version and is_default.`, `${param}.${key}`, 'invalid_provider_integration');
      }
    }
    for (const key of ['deployment_id', 'alias', 'api_version']) {
      const field = entry[key];
      if (typeof field !== 'string' || field.length === 0 || field.length > maxSettingLength) {
        throw badRequest(`${param}.${key} is required: a non-empty string.`, `${param}.${key}`, 'invalid_provider_integration');
      }
    }
    if (entry.is_default !== undefined && typeof entry.is_default !== 'boolean') {
      throw badRequest(`${param}.is_default must be a boolean.`, `${param}.is_default`, 'invalid_provider_integration');
    }
    return {
      deployment_id: entry.deployment_id as string,
      alias: entry.alias as string,
      api_version: entry.api_version as string,
      ...(entry.is_default !== undefined ? { is_default: entry.is_default as boolean } : {}),
    };
  });
}

/** The credential set of the body, or undefined when it names no credential field at all. */
function readCredentials(body: Record<string, unknown>): ProviderCredentials | undefined {
  if (!secretCredentialFields.some((field) => field in body)) return undefined;
  const credentials: Record<string, unknown> = {};
  for (const field of secretCredentialFields) {
    const value = body[field];
    if (value === undefined || value === null) continue;
    credentials[field] = readCredential(field, value);
  }
  return credentials as ProviderCredentials;
}

function readCredential(field: CredentialField, value: unknown): string | Record<string, unknown> {
  if (field === 'cloudB_service_account_json') {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw badRequest('cloudB_service_account_json must be the service account key file as a JSON object.', field, 'invalid_provider_integration');
    }
    if (JSON.stringify(value).length > maxSecretLength) {
      throw badRequest(`cloudB_service_account_json must be at most ${maxSecretLength} bytes of JSON.`, field, 'invalid_provider_integration');
    }
    return value as Record<string, unknown>;
  }
  if (typeof value !== 'string' || value.length === 0 || value.length > maxSecretLength) {
    throw badRequest(`${field} must be a non-empty string of at most ${maxSecretLength} characters (or null to remove it).`, field, 'invalid_provider_integration');
  }
  if (value === 'set' || value.includes('…')) {
    // What an answer shows in place of the secret; sending it back would store the placeholder.
    throw badRequest(`${field} looks like the masked value an answer shows; send the real credential, or leave the field out to keep the stored one.`, field, 'invalid_provider_integration');
  }
  return value;
}
