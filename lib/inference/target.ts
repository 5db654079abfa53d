import { integrationAsConfig, type ProviderCatalog, type ProviderIntegration } from '../catalog/providers';
import { badRequest, GatewayError } from '../core/errors';
import { cloudHeaderFields, destinationFields, secretCredentialFields } from '../providers/provider-fields';
import { defaultBaseUrl, findProvider, providerNames } from '../providers/registry';
import type { ProviderSettings, ResolvedTarget } from '../providers/types';
import type { PlanNode } from '../routing/plan';
import { storesSecret } from '../config/secret-destinations';

/**
 * The provider, key, host and cloud settings a request names outside a config (over HTTP, its
 * headers); a config's targets fall back on these.
 */
export interface ProviderCredentials {
  provider?: string;
  apiKey?: string;
  customHost?: string;
  virtualKey?: string;
  /** Cloud settings from the `x-gateway-cloudA-*`, `-cloudB-*` and `-cloudC-*` headers. */
  cloud?: ProviderSettings;
  /**
   * What the work itself names when the caller named no provider (a prompt's saved provider): it
   * selects the provider of targets that name none, and unlike the caller's own, never contradicts a
   * target that names one.
   */
  defaults?: Pick<ProviderCredentials, 'provider' | 'virtualKey'>;
}

const howToSelect =
  'Select a provider with the x-gateway-provider header (for example "openai") and send its key as Authorization: Bearer <provider key>, ' +
  'use a provider from the catalog (x-gateway-provider: @<slug>), send x-gateway-config, or send x-gateway-custom-host with the base URL of an OpenAI-compatible server.';

/**
 * Resolves each leaf's target once per request, however often routing retries it: the catalog
 * lookup, decryption and destination checks of a target do not change between attempts.
 */
export function targetResolver(
  catalog: ProviderCatalog,
  headers: ProviderCredentials,
  workspaceId: string,
  plan: { fromConfig: boolean; saved: boolean },
): (leaf: PlanNode) => Promise<ResolvedTarget> {
  const resolved = new Map<PlanNode, Promise<ResolvedTarget>>();
  return (leaf) => {
    let target = resolved.get(leaf);
    if (!target) resolved.set(leaf, (target = resolveTarget(catalog, leaf, headers, workspaceId, plan.fromConfig, plan.saved)));
    return target;
  };
}

/**
 * The provider, base URL and credentials of one target: the target's own settings, then a catalog
 * integration it names (`@slug` or `virtual_key`), then the request's headers. `saved` is true for a
 * saved config's targets, whose credentials are stored ones.
 */
export async function resolveTarget(
  catalog: ProviderCatalog,
  leaf: PlanNode,
  requested: ProviderCredentials,
  workspaceId: string,
  fromConfig: boolean,
  saved = false,
): Promise<ResolvedTarget> {
  const config = leaf.config;
  const headers = requested.defaults ? { ...requested, ...requested.defaults } : requested;
  if (saved && storesSecret(config)) refuseStoredSecretRedirect(leaf, headers);
  // The caller's own headers only: what the work names by default gives way to a target's own.
  if (fromConfig) refuseContradictingHeaders(leaf, requested);
  const providerRef = config.provider ?? headers.provider;
  const slug = providerRef?.startsWith('@') ? providerRef.slice(1) : (config.virtual_key ?? (config.provider ? undefined : headers.virtualKey));
  // Headers fill in what the target leaves out (what contradicts it was refused above).
  const headerSettings: ProviderSettings = { ...headers.cloud, ...(headers.customHost ? { custom_host: headers.customHost } : {}) };

  let name: string | undefined = slug ? undefined : providerRef;
  let settings: ProviderSettings = headers.cloud ? { ...headers.cloud, ...definedOnly(config) } : config;
  let customHost = leaf.settings.custom_host ?? settings.custom_host ?? headerSettings.custom_host;
  if (slug) {
    const integration = await catalog.find(workspaceId, slug);
    if (!integration) {
      throw badRequest(
        `No provider "${slug}" in this workspace's catalog. Create it with POST /v1/providers, or check the slug.`,
        fromConfig ? `${leaf.path}.provider` : 'x-gateway-provider',
        'unknown_provider',
      );
    }
    refuseDestinationOverrides(integration, leaf, headerSettings);
    name = integration.provider;
    settings = { ...integrationAsConfig(integration), ...definedOnly(config) };
    customHost = integration.custom_host;
  }

  if (!name && !customHost) {
    throw badRequest(
      fromConfig ? `${leaf.path} names no provider. ${howToSelect}` : `No provider selected. ${howToSelect}`,
      fromConfig ? `${leaf.path}.provider` : 'x-gateway-provider',
      fromConfig ? 'AB01' : 'provider_not_selected',
    );
  }
  // With only a custom host, the OpenAI wire format is assumed.
  const provider = findProvider(name ?? 'openai');
  if (!provider) {
    throw badRequest(
      `Unknown provider "${name}". Supported providers: ${providerNames.join(', ')}.`,
      fromConfig && config.provider ? `${leaf.path}.provider` : 'x-gateway-provider',
      'unknown_provider',
    );
  }
  const apiKey = settings.api_key ?? (slug ? undefined : headers.apiKey);
  if (fromConfig && !apiKey && !slug && !customHost && !hasCloudCredentials(settings)) {
    // The spec's rule 1, on the resolved target: a provider needs a key, a catalog entry or a host.
    throw new GatewayError(
      400,
      `${leaf.path} needs credentials: provider + api_key (or an Authorization header), a virtual_key or @provider-slug, or a custom_host.`,
      {
        param: leaf.path,
        code: 'AB01',
      },
    );
  }
  const resolved: ProviderSettings = apiKey === settings.api_key ? settings : { ...settings, api_key: apiKey };
  return { provider, baseUrl: customHost ? parseCustomHost(customHost) : defaultBaseUrl(provider, resolved), settings: resolved };
}

/**
 * A saved target's stored credentials travel only to the destination saved with them: its own
 * provider, catalog entry or custom_host. A request may not supply a destination for them — a
 * different x-gateway-custom-host, or, for a target saved without a provider (as older versions
 * allowed), a provider, catalog entry or cloud setting by header. Refused rather than ignored, so a
 * caller learns why its header had no effect.
 */
function refuseStoredSecretRedirect(leaf: PlanNode, headers: ProviderCredentials): void {
  const config = leaf.config;
  const storedHost = leaf.settings.custom_host;
  const refuse = (param: string): never => {
    throw badRequest(
      `${leaf.path} of this saved config stores a credential, which is only sent to the destination saved with it (its provider's base URL or its custom_host), so ${param} cannot choose where it goes. ` +
        'To call another host, save a config (or a catalog entry) for it with its own credentials, or send your own key in Authorization with an inline config or x-gateway-provider.',
      param,
      'catalog_host_fixed',
    );
  };
  if (headers.customHost !== undefined && (storedHost === undefined || parseCustomHost(headers.customHost) !== parseCustomHost(storedHost)))
    refuse('x-gateway-custom-host');
  if (config.provider !== undefined || config.virtual_key !== undefined) return; // its destination is stored; headers do not apply
  if (headers.virtualKey !== undefined) refuse('x-gateway-virtual-key');
  if (headers.provider !== undefined && (headers.provider.startsWith('@') || storedHost === undefined)) refuse('x-gateway-provider');
  for (const field in headers.cloud) refuse(cloudHeaderOf(field));
}

/**
 * With a config, the headers that name a provider, host or cloud setting fill in what a target
 * leaves out; one that says something else than the target does is refused, naming both, rather
 * than silently losing to it (docs/headers.md has the table). Authorization is apart: a target's
 * own key wins, as OpenAI's clients send the header whatever the config holds.
 */
function refuseContradictingHeaders(leaf: PlanNode, headers: ProviderCredentials): void {
  const config = leaf.config;
  const contradiction = (header: string, said: string, field: string, own: string): never => {
    throw badRequest(
      `${header} says ${JSON.stringify(said.slice(0, 200))}, but ${leaf.path}.${field} is ${JSON.stringify(own.slice(0, 200))}: with a config, each target's own ${field} is used. ` +
        `Remove the header, or change the config's ${field}.`,
      header,
      'config_header_conflict',
    );
  };
  const ownProvider = config.provider ?? (config.virtual_key !== undefined ? `@${config.virtual_key}` : undefined);
  if (ownProvider !== undefined) {
    const field = config.provider !== undefined ? 'provider' : 'virtual_key';
    if (headers.provider !== undefined && !sameProvider(headers.provider, ownProvider))
      contradiction('x-gateway-provider', headers.provider, field, ownProvider);
    if (headers.virtualKey !== undefined && !sameProvider(`@${headers.virtualKey}`, ownProvider))
      contradiction('x-gateway-virtual-key', headers.virtualKey, field, ownProvider);
  }
  const ownHost = leaf.settings.custom_host ?? config.custom_host;
  if (headers.customHost !== undefined && ownHost !== undefined && parseCustomHost(headers.customHost) !== parseCustomHost(ownHost))
    contradiction('x-gateway-custom-host', headers.customHost, 'custom_host', ownHost);
  for (const field in headers.cloud) {
    const own = config[field as keyof ProviderSettings];
    const said = headers.cloud[field as keyof ProviderSettings];
    if (own !== undefined && !sameSetting(said, own)) contradiction(cloudHeaderOf(field), String(said), field, String(own));
  }
}

/** `openai` and `OpenAI`, `@My-Slug` and `@my-slug`: one provider. */
function sameProvider(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/** Cloud headers that carry a credential: a catalog provider's stored credentials cannot be mixed with them. */
const credentialHeaderFields = new Set<string>(
  Object.values(cloudHeaderFields).filter((field) => (secretCredentialFields as readonly string[]).includes(field)),
);

/**
 * A catalog integration's credentials only travel to the base URL stored with them, so a config
 * (the target's own value or an inherited `custom_host`) or a header that would send them elsewhere
 * is refused instead of followed. A value equal to the stored one changes nothing and passes.
 */
function refuseDestinationOverrides(integration: ProviderIntegration, leaf: PlanNode, headerSettings: ProviderSettings): void {
  const refuse = (field: string, param: string): never => {
    throw badRequest(
      `@${integration.slug} is a catalog provider: its credentials are only sent to the host stored with them, so ${param} cannot change or add to it. ` +
        `To call another host, save a catalog entry with that ${field === 'custom_host' ? 'custom_host' : field} and its credentials (POST /v1/providers), ` +
        "or name the provider yourself (x-gateway-provider or the config's provider) with your own key in Authorization or api_key.",
      param,
      'catalog_host_fixed',
    );
  };
  // The target's own custom_host, or one inherited from a parent.
  const configuredHost = leaf.settings.custom_host;
  if (configuredHost !== undefined && parseCustomHost(configuredHost) !== integration.custom_host) refuse('custom_host', `${leaf.path}.custom_host`);
  if (headerSettings.custom_host !== undefined && parseCustomHost(headerSettings.custom_host) !== integration.custom_host)
    refuse('custom_host', 'x-gateway-custom-host');
  for (const field of destinationFields) {
    const stored = integration.settings[field];
    if (leaf.config[field] !== undefined && !sameSetting(leaf.config[field], stored)) refuse(field, `${leaf.path}.${field}`);
    if (headerSettings[field] !== undefined && !sameSetting(headerSettings[field], stored)) refuse(field, cloudHeaderOf(field));
  }
  for (const field of credentialHeaderFields) {
    if (headerSettings[field as keyof ProviderSettings] !== undefined) refuse(field, cloudHeaderOf(field));
  }
}

function sameSetting(value: unknown, stored: unknown): boolean {
  return typeof value === 'string' && typeof stored === 'string' && value.trim() === stored.trim();
}

function cloudHeaderOf(field: string): string {
  return Object.keys(cloudHeaderFields).find((header) => cloudHeaderFields[header] === field) ?? field;
}

function hasCloudCredentials(settings: ProviderSettings): boolean {
  return Boolean(
    settings.cloudA_access_key_id ||
      settings.cloudB_service_account_json ||
      settings.cloudB_project_id ||
      settings.cloudC_resource_name ||
      settings.cloudC_endpoint_name ||
      settings.cloudC_deployment_name,
  );
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}

/** A custom host is a provider base URL: http(s), no credentials, query or fragment. */
export function parseCustomHost(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badRequest(
      `custom_host must be an absolute http(s) URL such as https://models.example.com/v1; got "${value.slice(0, 200)}".`,
      'x-gateway-custom-host',
      'invalid_custom_host',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw badRequest('custom_host must use http or https.', 'x-gateway-custom-host', 'invalid_custom_host');
  }
  if (url.username || url.password || url.search || url.hash) {
    throw badRequest(
      'custom_host must not contain credentials, a query string or a fragment; send the key in Authorization.',
      'x-gateway-custom-host',
      'invalid_custom_host',
    );
  }
  return url.href.replace(/\/+$/, '');
}
