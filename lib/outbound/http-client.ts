import type { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { GatewayError } from '../http/errors';
import { assertLiteralHostAllowed, guardedLookup } from './address-guard';

/**
 * The one way the gateway talks to the outside: an undici keep-alive pool whose connections go
 * through the address guard. Redirects are never followed and bodies are never decompressed.
 */
const agent = new Agent({
  keepAliveTimeout: 10_000,
  keepAliveMaxTimeout: 60_000,
  headersTimeout: 600_000,
  bodyTimeout: 300_000,
  connect: { lookup: guardedLookup as never, timeout: 10_000 },
});

export interface OutboundRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: Buffer | string;
  signal?: AbortSignal;
  /** Names the upstream in error messages, e.g. the provider. */
  target: string;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

export async function sendOutbound(outbound: OutboundRequest): Promise<OutboundResponse> {
  try {
    assertLiteralHostAllowed(outbound.url.hostname);
    const response = await request(outbound.url, {
      method: outbound.method as 'GET',
      headers: outbound.headers,
      body: outbound.body,
      signal: outbound.signal,
      dispatcher: agent,
    });
    return { status: response.statusCode, headers: response.headers, body: response.body };
  } catch (error) {
    throw toOutboundError(error, outbound);
  }
}

/** Maps a connection failure to a 4xx (refused address) or a 502 that names the upstream. */
export function toOutboundError(error: unknown, outbound: Pick<OutboundRequest, 'url' | 'target'>): GatewayError {
  if (error instanceof GatewayError) return error;
  const err = error as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err.code ?? err.cause?.code;
  if (code === 'GATEWAY_ADDRESS_BLOCKED') {
    return new GatewayError(400, err.message ?? err.cause?.message ?? 'Address not allowed', { code: 'custom_host_not_allowed', param: 'x-gateway-custom-host' });
  }
  if (err.name === 'AbortError' || code === 'UND_ERR_ABORTED') {
    return new GatewayError(499, 'The request was cancelled before the provider answered.', { code: 'request_cancelled' });
  }
  const reason = code ?? err.message ?? 'unknown error';
  return new GatewayError(502, `Could not reach ${outbound.target} at ${outbound.url.host}: ${reason}.`, {
    code: 'provider_unreachable',
    provider: outbound.target,
    cause: error,
  });
}
