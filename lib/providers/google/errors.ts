import { GatewayError } from '../../core/errors';
import { providerError } from '../provider-error';
import type { GoogleErrorBody } from './api';

/**
 * A Google error (`{"error":{"code","message","status"}}`, also sent as the one element of an array
 * by the non-SSE stream endpoint) in the gateway's shape: Google's message, the HTTP status, and
 * the RPC status (`NOT_FOUND`, `RESOURCE_EXHAUSTED`, …) as the code. Other bodies go through the
 * generic provider error reader.
 * @see https://ai.google.dev/gemini-api/docs/troubleshooting#error-codes
 */
export function googleError(provider: string, status: number, body: Buffer): GatewayError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return providerError(provider, status, body);
  }
  const error = (Array.isArray(parsed) ? parsed[0] : parsed) as Partial<GoogleErrorBody> | undefined;
  return error?.error && typeof error.error.message === 'string'
    ? fromGoogleError(provider, status, error as GoogleErrorBody)
    : providerError(provider, status, body);
}

/** An error object that arrived as a stream chunk: its own `code` is the status. */
export function fromGoogleError(provider: string, status: number, body: GoogleErrorBody): GatewayError {
  const { code, message, status: rpcStatus } = body.error;
  const httpStatus = status >= 400 ? status : typeof code === 'number' && code >= 400 && code <= 599 ? code : 502;
  return new GatewayError(httpStatus, message ?? `${provider} answered with status ${httpStatus}.`, {
    code: rpcStatus ?? (code !== undefined ? String(code) : null),
    provider,
  });
}
