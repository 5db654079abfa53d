import { badRequest, GatewayError } from '../core/errors';
import { nameMap } from '../core/name-map';
import type { RouteContext } from '../http/pipeline';
import type { GatewayRequest, GatewayResponse } from '../http/types';
import { openOutbound, toOutboundError } from '../outbound/http-client';
import type { ResolvedTarget } from '../providers/types';
import { runStrategy } from '../routing/engine';
import { AttemptTimeout, isNetworkFailure, readProviderBody } from './provider-body';
import type { AttemptOutcome } from '../routing/attempt-outcome';
import { resolveRequestPlan } from './request-config';
import { defaultRequestTimeoutMs, readRequestTimeoutHeader } from './request-options';
import { routedResponse } from './routed-response';
import { streamIdleLimitMs, watchStreamIdle } from './stream-idle';
import { readHeaderCredentials, targetResolver } from './target';

const methods = new Set(['GET', 'POST', 'PUT', 'DELETE']);

/** Error bodies up to this size are held so a config can retry or fall back; larger ones are final. */
const maxHeldErrorBytes = 1024 * 1024;

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

/**
 * `/v1/{path}` for any path without a route of its own: forwarded to `{provider base URL}/{path}`
 * with the query string; the provider's status, headers and body bytes come back as they are,
 * streamed as they arrive. With a config, its strategy, retries and breakers apply as on the
 * unified routes (a non-2xx answer counts as a failure).
 */
export async function passthroughRoute(context: RouteContext): Promise<GatewayResponse> {
  const { request, auth, trace, log } = context;
  if (!methods.has(request.method)) {
    throw new GatewayError(405, `Pass-through supports GET, POST, PUT and DELETE; got ${request.method}.`, { code: 'method_not_allowed', headers: { allow: 'GET, POST, PUT, DELETE' } });
  }
  const path = passthroughPath(request.pathParameters.proxy ?? '');
  const plan = await resolveRequestPlan(request.headers, auth.workspaceId);
  const targetOf = targetResolver(readHeaderCredentials(request.headers), auth.workspaceId, plan.fromConfig);
  const timeoutHeader = readRequestTimeoutHeader(request.headers);
  const result = await runStrategy(plan.root, {
    identity: plan.identity,
    query: { metadata: trace.metadata ?? {}, params: {}, url: { pathname: request.path } },
    waitUntil: context.waitUntil,
    async attempt(leaf) {
      const target = await targetOf(leaf);
      log.provider = target.provider.name;
      // Without a config nothing is retried, so even an error body streams through untouched.
      return forward(request, target, {
        path,
        holdErrors: plan.fromConfig,
        timeoutMs: timeoutHeader ?? leaf.settings.request_timeout ?? defaultRequestTimeoutMs,
        onStall: (error) => (log.error = { message: error.message, code: error.code }),
      });
    },
  });
  return routedResponse(result, log);
}

async function forward(request: GatewayRequest, target: ResolvedTarget, options: { path: string; holdErrors: boolean; timeoutMs: number; onStall(error: GatewayError): void }): Promise<AttemptOutcome> {
  const providerName = target.provider.name;
  const url = passthroughUrl(target.baseUrl, options.path, request.rawQuery);
  const headers = nameMap<string>();
  for (const name in request.headers) {
    if (!droppedRequestHeaders.has(name) && !name.startsWith('x-gateway-')) headers[name] = request.headers[name];
  }
  const body = request.method === 'GET' || request.body.length === 0 ? undefined : request.body;
  Object.assign(headers, await target.provider.adapter.authenticate({ method: request.method, url, headers, body }, target));

  const call = openOutbound({ url, method: request.method, headers, body, target: providerName });
  const timeout = new AttemptTimeout(providerName, options.timeoutMs);
  timeout.watch(call);
  let response;
  try {
    response = await call.response;
  } catch (caught) {
    timeout.stop();
    const error = timeout.expired ? timeout.error() : toOutboundError(caught, { url, target: providerName });
    return { ok: false, status: error.status, headers: { 'x-gateway-provider': providerName }, error, network: true };
  }

  const responseHeaders = nameMap<string>();
  for (const name in response.headers) {
    const value = response.headers[name];
    if (value !== undefined && !droppedResponseHeaders.has(name)) responseHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  responseHeaders['x-gateway-provider'] = providerName;

  const declaredLength = Number(response.headers['content-length'] ?? 0);
  if (response.status >= 400 && options.holdErrors && declaredLength <= maxHeldErrorBytes) {
    // Held to decide on a retry or fallback: read under the request timeout, like the wait before it.
    let raw: Buffer;
    try {
      raw = await readProviderBody(response.body, timeout, { limit: maxHeldErrorBytes, what: 'The provider error response' });
    } catch (caught) {
      const error = caught as GatewayError;
      return { ok: false, status: error.status, headers: { 'x-gateway-provider': providerName }, error, network: isNetworkFailure(error) };
    } finally {
      timeout.stop();
    }
    const error = new GatewayError(response.status, `${providerName} answered ${response.status}.`, { code: 'provider_error', provider: providerName });
    return { ok: false, status: response.status, headers: responseHeaders, error, network: false, raw };
  }
  timeout.stop();
  response.body.on('close', () => {
    if (!response.body.readableEnded) call.abort();
  });
  // The provider's bytes are relayed as they are, so a silent body is cut off (the client sees the
  // response end early) rather than given an error event in a format that may not be the provider's.
  const idleMs = streamIdleLimitMs(options.timeoutMs);
  watchStreamIdle(response.body, idleMs, () => {
    options.onStall(new GatewayError(408, `${providerName} sent nothing for ${idleMs} ms in the middle of its answer; the gateway ended it.`, { code: 'timeout_error', provider: providerName }));
    call.abort();
  });
  return { ok: true, status: response.status, headers: responseHeaders, body: response.body };
}

const pathRule =
  'A pass-through path must stay under the provider base URL: it may not contain a "." or ".." segment (raw or percent-encoded, at any level of encoding) or a backslash.';

/**
 * The provider-relative path, encoded for the wire. API Gateway hands over the path decoded, so a
 * `%2e%2e%2f` the client sent arrives as `../`: a segment that is, or decodes to, a dot segment is
 * refused rather than resolved.
 */
export function passthroughPath(proxyPath: string): string {
  const segments = proxyPath.split('/');
  if (segments.some(escapesBase)) throw badRequest(pathRule, 'path', 'invalid_path');
  return segments.map(encodePathSegment).join('/');
}

/** `{base URL}/{path}?{query}`, which must still lie under the base path (whatever decoding came before). */
export function passthroughUrl(baseUrl: string, path: string, rawQuery: string): URL {
  const url = new URL(`${baseUrl}/${path}${rawQuery ? `?${rawQuery}` : ''}`);
  const base = new URL(baseUrl);
  const basePath = base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`;
  if (url.origin !== base.origin || !url.pathname.startsWith(basePath)) throw badRequest(pathRule, 'path', 'invalid_path');
  return url;
}

/** A segment that is a dot segment or holds a path separator once decoded (as often as it decodes). */
function escapesBase(segment: string): boolean {
  let decoded = segment;
  for (let round = 0; round < 8; round++) {
    if (decoded.includes('\\') || decoded.split('/').some((part) => part === '.' || part === '..')) return true;
    if (!decoded.includes('%')) return false;
    let next: string;
    try {
      next = decodeURIComponent(decoded);
    } catch {
      return false; // Not an escape sequence: it is sent encoded, as literal characters.
    }
    if (next === decoded) return false;
    decoded = next;
  }
  return true;
}

/** Re-encodes a decoded path segment, keeping the characters paths may hold as they are. */
function encodePathSegment(segment: string): string {
  return encodeURIComponent(segment).replace(/%(3A|40|21|24|26|27|28|29|2A|2B|2C|3B|3D)/g, (escaped) => decodeURIComponent(escaped));
}
