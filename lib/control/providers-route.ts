import {
  array,
  boolean,
  custom,
  maxLength,
  minLength,
  nullish,
  object,
  optional,
  pipe,
  refine,
  regex,
  string,
  transform,
  unknown,
  type core,
  type ZodMiniType,
} from 'zod/mini';
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
import { isPlainObject } from '../core/plain-object';
import { parseCustomHost } from '../inference/target';
import { secretCredentialFields, settingFields } from '../providers/provider-fields';
import { badRequest, GatewayError, notFound } from '../core/errors';
import { answerFields, controlRoutes, defineRoute, eachField, knownFields, paramOf } from '../http/define-route';
import { listEnvelope, pageQuery } from '../http/pagination';
import { findProvider, providerNames } from '../providers/registry';

const maxSecretLength = 16 * 1024;
const maxSettingLength = 1024;
const nameRule = 'name must be a string of 1 to 255 characters.';
const providerRule = `provider is required: one of ${providerNames.join(', ')}.`;
const slugRule = 'slug is required: 1 to 64 lowercase letters, digits or hyphens (it is used as @slug in x-gateway-provider).';
const customHostRule = 'custom_host must be a string: the provider base URL, e.g. https://models.example.com/v1.';
const deploymentsRule = 'deployments must be an array of at most 100 {deployment_id, alias, api_version, is_default} objects.';

/** The provider's canonical name (the registry's, lower-case). */
const providerName = pipe(
  string(providerRule).check(minLength(1, providerRule)),
  transform((name, context) => {
    const provider = findProvider(name);
    if (!provider) {
      const message = `Unknown provider "${name.slice(0, 100)}"; use one of ${providerNames.join(', ')}.`;
      context.issues.push({ code: 'custom', message, input: name, params: { code: 'unknown_provider' } });
    }
    return provider?.name ?? name;
  }),
);

/** The base URL as parseCustomHost normalises it. */
const customHost = pipe(
  custom<string>((value) => typeof value === 'string', { error: customHostRule, params: { code: 'invalid_custom_host' } }),
  transform((host, context) => {
    try {
      return parseCustomHost(host);
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      const message = `custom_host is not a usable provider base URL: ${error.message}`;
      context.issues.push({ code: 'custom', message, input: host, params: { code: 'invalid_custom_host' } });
      return host;
    }
  }),
);

const deploymentTextRule = { error: (issue: { path?: PropertyKey[] }) => `${paramOf(issue.path ?? [])} is required: a non-empty string.` };
const deploymentText = string(deploymentTextRule).check(minLength(1, deploymentTextRule), maxLength(maxSettingLength, deploymentTextRule));
const deployment = knownFields(
  {
    deployment_id: deploymentText,
    alias: deploymentText,
    api_version: deploymentText,
    is_default: optional(boolean({ error: (issue) => `${paramOf(issue.path ?? [])} must be a boolean.` })),
  },
  (field, at) => `Unknown field "${field}" in ${at}; a deployment takes deployment_id, alias, api_version and is_default.`,
);
// The length is checked before the items, so a huge array is refused without a check per item.
const deployments = pipe(array(unknown(), deploymentsRule).check(maxLength(100, deploymentsRule)), array(deployment));

function setting(field: SettingField) {
  if (field === 'deployments') return deployments;
  const rule = `${field} must be a non-empty string of at most ${maxSettingLength} characters.`;
  const text = string(rule).check(minLength(1, rule), maxLength(maxSettingLength, rule));
  if (field !== 'cloudC_deployment_type') return text;
  return text.check(refine((type) => type === 'serverless' || type === 'managed', 'cloudC_deployment_type must be "serverless" or "managed".'));
}

function credential(field: CredentialField) {
  if (field === 'cloudB_service_account_json') {
    return custom<Record<string, unknown>>(isPlainObject, `${field} must be the service account key file as a JSON object.`).check(
      refine((account) => JSON.stringify(account).length <= maxSecretLength, `${field} must be at most ${maxSecretLength} bytes of JSON.`),
    );
  }
  const rule = `${field} must be a non-empty string of at most ${maxSecretLength} characters (or null to remove it).`;
  return string(rule).check(
    minLength(1, rule),
    maxLength(maxSecretLength, rule),
    // What an answer shows in place of the secret; sending it back would store the placeholder.
    refine(
      (secret) => secret !== 'set' && !secret.includes('…'),
      `${field} looks like the masked value an answer shows; send the real credential, or leave the field out to keep the stored one.`,
    ),
  );
}

/** An integration's fields; `null` is the same as leaving a field out. */
const integrationBody = <Slug extends ZodMiniType>(slug: Slug) =>
  knownFields(
    {
      slug,
      provider: providerName,
      name: nullish(string(nameRule).check(minLength(1, nameRule), maxLength(255, nameRule))),
      ...eachField(settingFields, (field) => nullish(setting(field))),
      custom_host: nullish(customHost),
      ...eachField(secretCredentialFields, (field) => nullish(credential(field))),
      ...answerFields(['object', 'id', 'workspace_id', 'credentials', 'created_at', 'updated_at']),
    },
    (field) =>
      `Unknown field "${field}". A provider integration takes slug, provider, name, custom_host, credentials (${secretCredentialFields.join(', ')}) and settings (${settingFields.join(', ')}).`,
  );

const newIntegration = integrationBody(string(slugRule).check(regex(slugPattern, slugRule)));
/** The path names the integration; a slug in the body may only repeat it. */
const changedIntegration = integrationBody(optional(unknown()));

interface IntegrationInput {
  slug: string;
  provider: string;
  name: string;
  custom_host?: string;
  settings: ProviderSettings;
  /** Undefined when the body has no credential field at all. */
  credentials?: ProviderCredentials;
}

function integrationInput(body: core.output<typeof changedIntegration>, slug: string): IntegrationInput {
  const input: IntegrationInput = { slug, provider: body.provider, name: body.name ?? slug, settings: setFields(body, settingFields) as ProviderSettings };
  if (body.custom_host != null) input.custom_host = body.custom_host;
  // A body that names any credential field, if only as null, replaces the whole credential set.
  if (secretCredentialFields.some((field) => field in body)) input.credentials = setFields(body, secretCredentialFields) as ProviderCredentials;
  return input;
}

function setFields(body: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const set: Record<string, unknown> = {};
  for (const field of fields) if (body[field] != null) set[field] = body[field];
  return set;
}

const slugParam = object({ slug: string() });

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
export const providersRoute = controlRoutes(
  defineRoute({
    method: 'POST',
    path: '/v1/providers',
    role: 'admin',
    body: newIntegration,
    invalidCode: 'invalid_provider_integration',
    async handler({ body }, { auth }) {
      const input = integrationInput(body, body.slug);
      try {
        return present(await createProviderIntegration(auth.workspaceId, { ...input, credentials: input.credentials ?? {} }));
      } catch (error) {
        if (error instanceof ProviderSlugTakenError) {
          throw new GatewayError(409, `${error.message} Choose another slug, or change that integration with PUT /v1/providers/${input.slug}.`, {
            param: 'slug',
            code: 'provider_slug_taken',
          });
        }
        throw error;
      }
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/providers',
    role: 'member',
    query: pageQuery(),
    handler: async ({ query }, { auth }) => listEnvelope(await listProviderIntegrations(auth.workspaceId, query), present),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/providers/{slug}',
    role: 'member',
    params: slugParam,
    async handler({ params: { slug } }, { auth }) {
      const found = await getProviderIntegration(auth.workspaceId, slug);
      if (!found) throw integrationNotFound(slug);
      return present(found);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/v1/providers/{slug}',
    role: 'admin',
    params: slugParam,
    body: changedIntegration,
    invalidCode: 'invalid_provider_integration',
    async handler({ params: { slug }, body }, { auth }) {
      if (body.slug !== undefined && body.slug !== slug) {
        throw badRequest(
          `slug cannot be changed (the path names "${slug.slice(0, 100)}"); create a new integration instead.`,
          'slug',
          'invalid_provider_integration',
        );
      }
      const input = integrationInput(body, slug);
      const updated = slugPattern.test(slug) ? await updateProviderIntegration(auth.workspaceId, slug, input).catch(credentialsRequired) : undefined;
      if (!updated) throw integrationNotFound(slug);
      return present(updated);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/providers/{slug}',
    role: 'admin',
    params: slugParam,
    async handler({ params: { slug } }, { auth }) {
      const deleted = slugPattern.test(slug) ? await deleteProviderIntegration(auth.workspaceId, slug) : undefined;
      if (!deleted) throw integrationNotFound(slug);
      return { id: deleted.id, slug: deleted.slug, object: 'provider', deleted: true };
    },
  }),
);

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

const integrationNotFound = (slug: string) => notFound(`No provider integration with slug "${slug.slice(0, 100)}" in this workspace.`, 'provider_not_found');

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
