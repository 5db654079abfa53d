import { GatewayError } from '../core/errors';
import { nameMap } from '../core/name-map';
import { openOutbound, toOutboundError } from '../outbound/http-client';
import type { ResolvedTarget } from '../providers/types';
import type { AttemptOutcome } from '../routing/attempt-outcome';
import type { PassthroughRequest } from './inference-request';
import { passthroughUrl } from './passthrough-path';
import { isNetworkFailure, readProviderBody, type AttemptTimeout } from './provider-body';
import { streamIdleLimitMs, watchStreamIdle } from './stream-idle';

/** Error bodies up to this size are held so a config can retry or fall back; larger ones are final. */
const maxHeldErrorBytes = 1024 * 1024;

/** Headers that describe one connection, not the message: never carried across the gateway in either direction. */
const hopByHopHeaders = ['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

/**
 * Request headers never forwarded: hop-by-hop headers, the length (recomputed), the gateway's own
 * headers, and what API Gateway adds about the client and its own hops.
 */
const droppedRequestHeaders = new Set([
  ...hopByHopHeaders,
  'host',
  'content-length',
  'authorization',
  'via',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-port',
  'x-forwarded-proto',
  'x-amzn-trace-id',
  'x-amz-cf-id',
]);

/**
 * Response headers not relayed: hop-by-hop headers and the framing headers (`content-length`,
 * `transfer-encoding`) that the gateway's own transport sets. `content-encoding` is kept because the
 * body bytes are relayed exactly as the provider encoded them.
 */
const droppedResponseHeaders = new Set([...hopByHopHeaders, 'content-length']);

export interface ForwardOptions {
  /** Read an error body whole (so routing can retry or fall back) instead of relaying it as it comes. */
  holdErrors: boolean;
  /** The body went silent after it had started; the client sees it end early. */
  onStall(error: GatewayError): void;
}

/**
 * One pass-through call: the client's request to `{target base URL}/{path}`, under the attempt's
 * timeout; the provider's status, headers and body bytes come back as they are.
 */
export async function forwardToProvider(
  request: PassthroughRequest,
  target: ResolvedTarget,
  timeout: AttemptTimeout,
  options: ForwardOptions,
): Promise<AttemptOutcome> {
  const providerName = target.provider.name;
  const url = passthroughUrl(target.baseUrl, request.providerPath, request.rawQuery);
  const headers = nameMap<string>();
  for (const name in request.headers) {
    if (!droppedRequestHeaders.has(name) && !name.startsWith('x-gateway-')) headers[name] = request.headers[name];
  }
  const body = request.bytes;
  Object.assign(headers, await target.provider.adapter.authenticate({ method: request.method, url, headers, body }, target));

  const call = openOutbound({ url, method: request.method, headers, body, target: providerName });
  timeout.watch(call);
  let response;
  try {
    response = await call.response;
  } catch (caught) {
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
    }
    const error = new GatewayError(response.status, `${providerName} answered ${response.status}.`, { code: 'provider_error', provider: providerName });
    return { ok: false, status: response.status, headers: responseHeaders, error, network: false, raw };
  }
  response.body.on('close', () => {
    if (!response.body.readableEnded) call.abort();
  });
  // The provider's bytes are relayed as they are, so a silent body is cut off (the client sees the
  // response end early) rather than given an error event in a format that may not be the provider's.
  const idleMs = streamIdleLimitMs(timeout.timeoutMs);
  watchStreamIdle(response.body, idleMs, () => {
    options.onStall(
      new GatewayError(408, `${providerName} sent nothing for ${idleMs} ms in the middle of its answer; the gateway ended it.`, {
        code: 'timeout_error',
        provider: providerName,
      }),
    );
    call.abort();
  });
  return { ok: true, status: response.status, headers: responseHeaders, body: response.body };
}
