import { GatewayError } from '../../core/errors';
import { providerError } from '../provider-error';

/**
 * The HTTP status Anthropic uses for each error type; an error inside a stream (after a 200) only
 * names the type, so the status is recovered from it (an `overloaded_error` is a 529 again).
 * @see https://docs.anthropic.com/en/api/errors
 */
const statusByType: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

const statusOfType = (type: string): number | undefined => (Object.hasOwn(statusByType, type) ? statusByType[type] : undefined);

/**
 * An Anthropic error response (`{"type":"error","error":{"type","message"}}`) in the gateway's
 * error shape: Anthropic's status and message, and its error type as both `type` and `code` (the
 * same as for an error inside a stream). Other bodies (a proxy's HTML page) are read generically.
 */
export function readAnthropicError(provider: string, status: number, body: Buffer): GatewayError {
  const generic = providerError(provider, status, body);
  const type = generic.type;
  if (statusOfType(type) === undefined) return generic;
  return new GatewayError(status, generic.message, { type, code: type, provider });
}

/** An `event: error` that arrived after the stream started. */
export function streamEventError(provider: string, error: { type?: unknown; message?: unknown } | undefined): GatewayError {
  const type = typeof error?.type === 'string' ? error.type : 'api_error';
  const message = typeof error?.message === 'string' && error.message ? error.message : `${provider} reported ${type} during the stream.`;
  return new GatewayError(statusOfType(type) ?? 502, message, { type, code: type, provider });
}
