import type { GatewayResponse } from '../http/types';
import type { RequestLogFields } from '../observability/request-log';
import type { RoutingResult } from '../routing/engine';

/** `x-gateway-cache-status` until caching exists: every routed answer, streamed or not, says so. */
export const cacheStatusHeaders = { 'x-gateway-cache-status': 'DISABLED' } as const;

/**
 * The answer of a routed request: the final attempt's response (or its error, as it came), with the
 * routing headers: which option answered, how many retries it took, and the cache status.
 */
export function routedResponse(result: RoutingResult, log: RequestLogFields): GatewayResponse {
  const { outcome } = result;
  const headers: Record<string, string> = {
    ...outcome.headers,
    'x-gateway-retry-attempt-count': String(result.retries),
    ...cacheStatusHeaders,
    // Without a config the request's headers are the whole config: its root, `config`.
    'x-gateway-last-used-option-index': result.path,
  };
  if (outcome.ok) return { status: outcome.status, headers, body: outcome.body };
  log.error = { message: outcome.error.message.slice(0, 2000), code: outcome.error.code };
  if (outcome.raw) return { status: outcome.status, headers, body: outcome.raw };
  return { status: outcome.error.status, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(outcome.error.toBody()) };
}
