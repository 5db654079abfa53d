import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { GatewayError } from '../http/errors';
import { assertLiteralHostAllowed, guardedLookup } from './address-guard';

/**
 * The one way the gateway talks to the outside: keep-alive pools whose connections go through the
 * address guard. Redirects are never followed and bodies are never decompressed. (node:http rather
 * than undici: the same work for a fraction of the bundle size and cold start.)
 */
const agentOptions = { keepAlive: true, keepAliveMsecs: 10_000, maxFreeSockets: 256, scheduling: 'lifo' as const };

/** Silence after which a provider connection is given up (Lambda's streamed-response idle limit). */
const idleTimeoutMs = 5 * 60_000;
const agents = { 'http:': new HttpAgent(agentOptions), 'https:': new HttpsAgent(agentOptions) };

export interface OutboundRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: Buffer | string;
  /** Names the upstream in error messages, e.g. the provider. */
  target: string;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

/** An outbound call in flight: its response, and a way to stop it (before or after the answer). */
export interface OutboundCall {
  response: Promise<OutboundResponse>;
  abort(): void;
}

/**
 * Starts an outbound call. The hot path stops calls with `abort()` from its own timer rather than
 * an AbortSignal: a signal per request costs listeners and, on abort, a DOMException.
 */
export function openOutbound(outbound: OutboundRequest): OutboundCall {
  let destroy: ((error: Error) => void) | undefined;
  let aborted = false;
  const abortError = () => Object.assign(new Error('The outbound call was aborted.'), { name: 'AbortError', code: 'ABORT_ERR' });
  const response = new Promise<OutboundResponse>((resolve, reject) => {
    const { url } = outbound;
    const fail = (error: unknown) => reject(toOutboundError(error, outbound));
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return fail(new Error(`unsupported protocol ${url.protocol}`));
    try {
      assertLiteralHostAllowed(url.hostname);
    } catch (error) {
      return fail(error);
    }
    const headers: Record<string, string> = { ...outbound.headers };
    if (outbound.body !== undefined) headers['content-length'] = String(Buffer.byteLength(outbound.body));
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, { method: outbound.method, headers, agent: agents[url.protocol], lookup: guardedLookup as never });
    destroy = (error) => request.destroy(error);
    if (aborted) request.destroy(abortError());
    request.once('response', (message: IncomingMessage) => resolve({ status: message.statusCode ?? 502, headers: message.headers, body: message }));
    request.once('error', fail);
    request.setTimeout(idleTimeoutMs, () => request.destroy(Object.assign(new Error('no data from the provider for 5 minutes'), { code: 'ETIMEDOUT' })));
    request.end(outbound.body);
  });
  return {
    response,
    abort() {
      aborted = true;
      destroy?.(abortError());
    },
  };
}

/** One outbound call; `signal` stops it (for calls off the hot path: token exchanges, media fetches). */
export async function sendOutbound(outbound: OutboundRequest & { signal?: AbortSignal }): Promise<OutboundResponse> {
  const call = openOutbound(outbound);
  if (!outbound.signal) return call.response;
  if (outbound.signal.aborted) call.abort();
  const onAbort = () => call.abort();
  outbound.signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await call.response;
  } finally {
    outbound.signal.removeEventListener('abort', onAbort);
  }
}

/** Maps a connection failure to a 4xx (refused address) or a 502 that names the upstream. */
export function toOutboundError(error: unknown, outbound: Pick<OutboundRequest, 'url' | 'target'>): GatewayError {
  if (error instanceof GatewayError) return error;
  const err = error as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err.code ?? err.cause?.code;
  if (code === 'GATEWAY_ADDRESS_BLOCKED') {
    return new GatewayError(400, err.message ?? 'Address not allowed', { code: 'custom_host_not_allowed', param: 'x-gateway-custom-host' });
  }
  if (err.name === 'AbortError' || code === 'ABORT_ERR') {
    return new GatewayError(499, 'The request was cancelled before the provider answered.', { code: 'request_cancelled' });
  }
  const reason = code ?? err.message ?? 'unknown error';
  return new GatewayError(502, `Could not reach ${outbound.target} at ${outbound.url.host}: ${reason}.`, {
    code: 'provider_unreachable',
    provider: outbound.target,
    cause: error,
  });
}
