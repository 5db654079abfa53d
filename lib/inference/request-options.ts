/*
 * Options every request has, whatever carried it; reading them from a request's headers is the
 * HTTP edge's (`lib/http/inference/option-headers.ts`).
 */
import { nameMap } from '../core/name-map';

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
