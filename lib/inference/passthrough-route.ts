import { GatewayError } from '../http/errors';
import type { RouteContext } from '../http/pipeline';
import type { GatewayResponse } from '../http/types';
import { sendOutbound } from '../outbound/http-client';
import { authHeaders, resolveTarget } from './target';

const methods = new Set(['GET', 'POST', 'PUT', 'DELETE']);

/**
 * Request headers never forwarded: hop-by-hop headers, the length (recomputed), the gateway's own
 * headers, and what API Gateway adds about the client and its own hops.
 */
const droppedRequestHeaders = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade',
  'host', 'content-length', 'authorization', 'via', 'forwarded', 'x-forwarded-for', 'x-forwarded-port', 'x-forwarded-proto',
  'x-amzn-trace-id', 'x-amz-cf-id',
]);

/**
 * Response headers not relayed: hop-by-hop headers and the framing headers (`content-length`,
 * `transfer-encoding`) that the gateway's own transport sets. `content-encoding` is kept because the
 * body bytes are relayed exactly as the provider encoded them.
 */
export const droppedResponseHeaders = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length',
]);

/** API Gateway hands over the path decoded; re-encode it, keeping the characters paths may hold as they are. */
function encodePathSegment(segment: string): string {
  return encodeURIComponent(segment).replace(/%(3A|40|21|24|26|27|28|29|2A|2B|2C|3B|3D)/g, (escaped) => decodeURIComponent(escaped));
}

/**
 * `/v1/{path}` for any path without a route of its own: forwarded to `{provider base URL}/{path}`
 * with the query string; the provider's status, headers and body bytes come back as they are,
 * streamed as they arrive.
 */
export async function passthroughRoute(context: RouteContext): Promise<GatewayResponse> {
  const { request } = context;
  if (!methods.has(request.method)) {
    throw new GatewayError(405, `Pass-through supports GET, POST, PUT and DELETE; got ${request.method}.`, { code: 'method_not_allowed', headers: { allow: 'GET, POST, PUT, DELETE' } });
  }
  const target = resolveTarget(request.headers);
  context.log.provider = target.provider.name;

  const headers: Record<string, string> = {};
  for (const name in request.headers) {
    if (!droppedRequestHeaders.has(name) && !name.startsWith('x-gateway-')) headers[name] = request.headers[name];
  }
  Object.assign(headers, authHeaders(target));

  const path = (request.pathParameters.proxy ?? '').split('/').map(encodePathSegment).join('/');
  const url = new URL(`${target.baseUrl}/${path}${request.rawQuery ? `?${request.rawQuery}` : ''}`);
  const abort = new AbortController();
  const response = await sendOutbound({
    url,
    method: request.method,
    headers,
    body: request.method === 'GET' || request.body.length === 0 ? undefined : request.body,
    signal: abort.signal,
    target: target.provider.name,
  });

  const responseHeaders: Record<string, string> = {};
  for (const name in response.headers) {
    const value = response.headers[name];
    if (value !== undefined && !droppedResponseHeaders.has(name)) responseHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  responseHeaders['x-gateway-provider'] = target.provider.name;
  response.body.on('close', () => {
    if (!response.body.readableEnded) abort.abort();
  });
  return { status: response.status, headers: responseHeaders, body: response.body };
}
