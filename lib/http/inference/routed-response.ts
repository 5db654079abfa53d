import type { GatewayResponse } from '../types';
import type { RequestRecorder } from '../../observability/request-recorder';
import type { CacheStatus, InferenceResult } from '../../inference/context';

export function cacheStatusHeader(status: CacheStatus): Record<string, string> {
  return { 'x-gateway-cache-status': status };
}

/**
 * The answer of a routed request: the final attempt's response (or its error, as it came), with the
 * routing headers: which option answered, how many retries it took, and the cache status.
 */
export function routedResponse(result: InferenceResult, recorder: RequestRecorder): GatewayResponse {
  const { outcome } = result;
  const headers: Record<string, string> = {
    ...outcome.headers,
    'x-gateway-retry-attempt-count': String(result.retries),
    ...cacheStatusHeader(result.cacheStatus),
    // Without a config the request's headers are the whole config: its root, `config`.
    'x-gateway-last-used-option-index': result.path,
  };
  if (outcome.ok) return { status: outcome.status, headers, body: outcome.body };
  recorder.failed(outcome.error);
  if (outcome.raw) return { status: outcome.status, headers, body: outcome.raw };
  return { status: outcome.error.status, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(outcome.error.toBody()) };
}
