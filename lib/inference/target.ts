import { badRequest } from '../http/errors';
import { defaultBaseUrl, findProvider, providerNames, type Provider } from '../providers/registry';

/** The provider a request goes to, where it lives and the key to send. */
export interface Target {
  provider: Provider;
  baseUrl: string;
  apiKey?: string;
}

const howToSelect =
  'Select a provider with the x-gateway-provider header (for example "openai") and send its key as Authorization: Bearer <provider key>, ' +
  'or send x-gateway-custom-host with the base URL of an OpenAI-compatible server.';

/** Reads `x-gateway-provider`, `Authorization` and `x-gateway-custom-host` into a target. */
export function resolveTarget(headers: Record<string, string>): Target {
  const name = headers['x-gateway-provider']?.trim();
  const customHost = headers['x-gateway-custom-host']?.trim();
  if (!name && !customHost) {
    if (headers['x-gateway-config'] || headers['x-gateway-virtual-key']) {
      throw badRequest(`Configs and virtual keys are not supported by this gateway version yet. ${howToSelect}`, 'x-gateway-config', 'provider_not_selected');
    }
    throw badRequest(`No provider selected. ${howToSelect}`, 'x-gateway-provider', 'provider_not_selected');
  }
  if (name?.startsWith('@')) {
    throw badRequest(`Provider slugs (${name}) from the model catalog are not supported by this gateway version yet. ${howToSelect}`, 'x-gateway-provider', 'unknown_provider');
  }
  // With only a custom host, the OpenAI wire format is assumed.
  const provider = findProvider(name || 'openai');
  if (!provider) {
    throw badRequest(`Unknown provider "${name}". Supported providers: ${providerNames.join(', ')}.`, 'x-gateway-provider', 'unknown_provider');
  }
  const target: Target = { provider, baseUrl: customHost ? parseCustomHost(customHost) : defaultBaseUrl(provider) };
  const apiKey = bearerToken(headers.authorization);
  if (apiKey) target.apiKey = apiKey;
  return target;
}

function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
  return match ? match[1] : authorization.trim();
}

/** A custom host is a provider base URL: http(s), no credentials, query or fragment. */
export function parseCustomHost(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badRequest(`x-gateway-custom-host must be an absolute http(s) URL such as https://models.example.com/v1; got "${value.slice(0, 200)}".`, 'x-gateway-custom-host', 'invalid_custom_host');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw badRequest('x-gateway-custom-host must use http or https.', 'x-gateway-custom-host', 'invalid_custom_host');
  }
  if (url.username || url.password || url.search || url.hash) {
    throw badRequest('x-gateway-custom-host must not contain credentials, a query string or a fragment; send the key in Authorization.', 'x-gateway-custom-host', 'invalid_custom_host');
  }
  return url.href.replace(/\/+$/, '');
}

/** The headers that carry the provider key, in the provider's own form. */
export function authHeaders(target: Target): Record<string, string> {
  if (!target.apiKey || !target.provider.auth) return target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {};
  return { [target.provider.auth.header]: target.provider.auth.prefix + target.apiKey };
}
