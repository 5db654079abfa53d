/**
 * Errors as Anthropic's API writes them, `{"type":"error","error":{"type","message"}}`, so that an
 * Anthropic client reads the gateway's refusals (a missing key, a bad body, a provider's failure) as
 * it reads Anthropic's own: its error classes are chosen by status, and its messages by these fields.
 * @see https://docs.anthropic.com/en/api/errors
 */
import type { GatewayError } from '../../core/errors';

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

const anthropicTypes = new Set([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'timeout_error',
  'overloaded_error',
]);

const typeByStatus: Record<number, string> = {
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/**
 * The Anthropic error type of an error: its own type when it is one of Anthropic's (an Anthropic
 * provider's error keeps it), else the type Anthropic gives its status; any other client error is
 * an `invalid_request_error`, any other server error an `api_error`.
 */
export function anthropicErrorType(status: number | undefined, type: string | undefined): string {
  if (type !== undefined && anthropicTypes.has(type)) return type;
  if (status === undefined) return 'api_error';
  return typeByStatus[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/**
 * The error in Anthropic's shape. What the gateway's own body adds beside `error` (the results of
 * the checks that refused a request) stays beside it.
 */
export function anthropicErrorBody(error: GatewayError): AnthropicErrorBody {
  const { error: _gatewayShape, ...beside } = error.toBody();
  return { ...beside, type: 'error', error: { type: anthropicErrorType(error.status, error.type), message: error.message } };
}

/** The `error` event that ends a stream which failed after it began. */
export function anthropicErrorEvent(body: AnthropicErrorBody): string {
  return `event: error\ndata: ${JSON.stringify(body)}\n\n`;
}
