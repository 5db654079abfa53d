import { badRequest } from '../core/errors';
import { parseClientJson } from '../wire/client-json';
import { nameMap } from '../core/name-map';
import { maxRequestTimeoutMs } from '../core/time';
import type { CacheOptions } from './inference-request';

/** Headers never forwarded by name: the gateway's own, and those that frame or route the request. */
const neverForwarded = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-authorization',
  'x-gateway-api-key',
]);

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

/** The named request headers, as the client sent them, for the provider. */
export function forwardedHeaders(requestHeaders: Record<string, string>, names: readonly string[]): Record<string, string> {
  const forwarded = nameMap<string>();
  for (const name of names) {
    const key = name.toLowerCase();
    if (neverForwarded.has(key) || key.startsWith('x-gateway-')) continue;
    const value = requestHeaders[key];
    if (value !== undefined) forwarded[key] = value;
  }
  return forwarded;
}

/** Without a `request_timeout`, an attempt waits this long for the provider's first byte. */
export const defaultRequestTimeoutMs = 10 * 60_000;

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
