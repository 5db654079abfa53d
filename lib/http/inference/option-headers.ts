/*
 * A request's gateway options as HTTP carries them: the `x-gateway-*` headers (and Authorization),
 * read once by `fromHttp` into `InferenceOptions`, each refused with a 400 that names its header.
 * The core never reads a header; work that did not come over HTTP sets the options itself.
 */
import { parseConfigRef } from '../../config/saved-configs';
import { configError, parseConfigHeader } from '../../config/schema';
import type { GatewayConfig } from '../../config/types';
import { badRequest, GatewayError } from '../../core/errors';
import { maxRequestTimeoutMs } from '../../core/time';
import type { ProviderCredentials } from '../../inference/target';
import type { CacheOptions } from '../../inference/inference-request';
import { inlinePlan, refusePromptId, type ConfigSource, type RequestPlan } from '../../inference/request-config';
import { cloudHeaderFields } from '../../providers/provider-fields';
import { parseClientJson } from '../../wire/client-json';

/**
 * Inline configs already read, by the header's text: clients send the same config on every request,
 * and validating, planning and hashing it again each time is most of a cached answer's cost. Only
 * valid configs are kept (a refused one throws before), and plans are only read once built.
 */
const inlineConfigs = new Map<string, { config: GatewayConfig; plan: RequestPlan }>();
const maxInlineConfigs = 256;
const maxRememberedHeaderLength = 16 * 1024;

async function readInlineConfig(value: string): Promise<ConfigSource> {
  const known = inlineConfigs.get(value);
  if (known) return { kind: 'inline', ...known };
  const parsed = await parseConfigHeader(value);
  if (!parsed.ok) throw configError(parsed.issues);
  refusePromptId(parsed.config);
  const plan = inlinePlan(parsed.config);
  if (value.length <= maxRememberedHeaderLength) {
    if (inlineConfigs.size >= maxInlineConfigs) inlineConfigs.delete(inlineConfigs.keys().next().value!);
    inlineConfigs.set(value, { config: parsed.config, plan });
  }
  return { kind: 'inline', config: parsed.config, plan };
}

/**
 * Reads `x-gateway-config`: a JSON config when it starts with `{` (validated here), else the id of
 * a saved config (`cfg_…`, optionally `@<version>`). Without it, the request's headers alone select
 * the provider.
 */
export async function readConfigHeader(headers: Record<string, string>): Promise<ConfigSource> {
  const value = headers['x-gateway-config']?.trim();
  if (!value) return { kind: 'headers' };
  if (value.startsWith('{')) return readInlineConfig(value);
  if (!parseConfigRef(value)) {
    throw new GatewayError(
      400,
      `x-gateway-config must be a config as a JSON object (starting with "{") or the id of a saved config such as cfg_abc123 or cfg_abc123@2; got ${JSON.stringify(value.slice(0, 100))}.`,
      { param: 'x-gateway-config', code: 'invalid_config_header' },
    );
  }
  return { kind: 'saved', ref: value };
}

/** The provider, key, host and cloud settings the headers name outside a config. */
export function readProviderCredentials(headers: Record<string, string>): ProviderCredentials {
  const credentials: ProviderCredentials = {};
  const provider = headers['x-gateway-provider']?.trim();
  if (provider) credentials.provider = provider;
  const authorization = headers.authorization?.trim();
  if (authorization) credentials.apiKey = /^Bearer\s+(.+)$/i.exec(authorization)?.[1] ?? authorization;
  const customHost = headers['x-gateway-custom-host']?.trim();
  if (customHost) credentials.customHost = customHost;
  const virtualKey = headers['x-gateway-virtual-key']?.trim();
  if (virtualKey) credentials.virtualKey = virtualKey;
  for (const name in cloudHeaderFields) {
    const value = headers[name]?.trim();
    if (value) (credentials.cloud ??= {})[cloudHeaderFields[name]] = (name === serviceAccountHeader ? readServiceAccount(value) : value) as never;
  }
  return credentials;
}

const serviceAccountHeader = 'x-gateway-cloudb-service-account-json';

/** The service account key a header carries as JSON text; the config field is the object itself. */
function readServiceAccount(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = parseClientJson(value);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw badRequest(`${serviceAccountHeader} must be the service account key as a JSON object.`, serviceAccountHeader, 'invalid_header');
  }
  return parsed as Record<string, unknown>;
}

/** `x-gateway-forward-headers`: a JSON array of header names, or a comma-separated list. */
export function readForwardHeaderNames(headers: Record<string, string>): string[] {
  const value = headers['x-gateway-forward-headers']?.trim();
  if (!value) return [];
  if (value.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = parseClientJson(value);
    } catch {
      throw badRequest(
        'x-gateway-forward-headers must be a JSON array of header names or a comma-separated list.',
        'x-gateway-forward-headers',
        'invalid_header',
      );
    }
    if (!Array.isArray(parsed) || !parsed.every((name) => typeof name === 'string')) {
      throw badRequest('x-gateway-forward-headers must be an array of header names.', 'x-gateway-forward-headers', 'invalid_header');
    }
    return parsed;
  }
  return value
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
}

/** `x-gateway-request-timeout` in milliseconds (it wins over the config's `request_timeout`). */
export function readRequestTimeoutHeader(headers: Record<string, string>): number | undefined {
  const value = headers['x-gateway-request-timeout']?.trim();
  if (!value) return undefined;
  const timeout = Number(value);
  if (!Number.isInteger(timeout) || timeout <= 0 || timeout > maxRequestTimeoutMs) {
    throw badRequest(
      `x-gateway-request-timeout must be a whole number of milliseconds from 1 to ${maxRequestTimeoutMs} (the inference functions' own ${maxRequestTimeoutMs / 1000} s timeout); got ${JSON.stringify(value.slice(0, 40))}.`,
      'x-gateway-request-timeout',
      'invalid_header',
    );
  }
  return timeout;
}

const maxNamespaceLength = 256;

/** `x-gateway-cache-namespace` (at most 256 characters) and `x-gateway-cache-force-refresh` (`true`/`false`). */
export function readCacheHeaders(headers: Record<string, string>): CacheOptions {
  const options: CacheOptions = { forceRefresh: false };
  const namespace = headers['x-gateway-cache-namespace']?.trim();
  if (namespace) {
    if (namespace.length > maxNamespaceLength) {
      throw badRequest(`x-gateway-cache-namespace must be at most ${maxNamespaceLength} characters.`, 'x-gateway-cache-namespace', 'invalid_header');
    }
    options.namespace = namespace;
  }
  const refresh = headers['x-gateway-cache-force-refresh']?.trim().toLowerCase();
  if (refresh !== undefined && refresh !== '') {
    if (refresh !== 'true' && refresh !== 'false') {
      throw badRequest('x-gateway-cache-force-refresh must be true or false.', 'x-gateway-cache-force-refresh', 'invalid_header');
    }
    options.forceRefresh = refresh === 'true';
  }
  return options;
}

/** `x-gateway-strict-api-compliance` (`true`/`false`): the request's strictness where a config leaves it unset. */
export function readStrictComplianceHeader(headers: Record<string, string>): boolean | undefined {
  const value = headers['x-gateway-strict-api-compliance']?.trim().toLowerCase();
  if (value === undefined || value === '') return undefined;
  if (value !== 'true' && value !== 'false') {
    throw badRequest('x-gateway-strict-api-compliance must be true or false.', 'x-gateway-strict-api-compliance', 'invalid_header');
  }
  return value === 'true';
}
