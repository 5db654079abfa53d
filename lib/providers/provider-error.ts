import { GatewayError } from '../core/errors';

/**
 * A provider's error response in the gateway's error shape: the provider's status and message are
 * kept, and `provider` names who answered. The provider's own response headers are not carried:
 * routed answers relay the headers they keep (lib/inference) themselves.
 */
export function providerError(provider: string, status: number, body: Buffer): GatewayError {
  let message: string | undefined;
  let type: string | undefined;
  let param: string | null = null;
  let code: string | null = null;
  try {
    const parsed = JSON.parse(body.toString('utf8'));
    const error = parsed?.error ?? parsed;
    if (typeof error === 'string') message = error;
    else if (error && typeof error === 'object') {
      message = typeof error.message === 'string' ? error.message : typeof parsed.message === 'string' ? parsed.message : undefined;
      if (typeof error.type === 'string') type = error.type;
      if (typeof error.param === 'string') param = error.param;
      if (typeof error.code === 'string' || typeof error.code === 'number') code = String(error.code);
    }
  } catch {
    // not JSON: keep the text below
  }
  message ??= body.toString('utf8').slice(0, 1000).trim() || `The provider answered with status ${status}.`;
  return new GatewayError(status, message, { type, param, code, provider });
}
