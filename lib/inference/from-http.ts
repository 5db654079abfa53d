import { GatewayError } from '../core/errors';
import { readJsonObject } from '../http/json-body';
import type { RouteContext } from '../http/pipeline';
import type { JsonObject, Operation } from '../providers/types';
import type { InferenceFields, InferenceRequest, PassthroughRequest, UnifiedRequest } from './inference-request';
import { passthroughPath } from './passthrough-path';
import { readConfigHeader } from './request-config';
import { readCacheHeaders, readForwardHeaderNames, readRequestTimeoutHeader } from './request-options';
import { readHeaderCredentials } from './target';
import { validateInferenceBody } from './validate';

const passthroughMethods = new Set(['GET', 'POST', 'PUT', 'DELETE']);

/**
 * The inference request an HTTP request carries: the body read and validated, then every
 * `x-gateway-*` option read, so a bad header is a 400 before any provider is chosen. The model and
 * stream flag reach the log even when a header is refused.
 */
export function fromHttp(route: Operation | 'passthrough', context: RouteContext): InferenceRequest {
  return route === 'passthrough' ? passthroughFromHttp(context) : unifiedFromHttp(route, context);
}

function unifiedFromHttp(operation: Operation, context: RouteContext): UnifiedRequest {
  const body = readJsonObject(context.request);
  validateInferenceBody(operation, body);
  const stream = body.stream === true;
  context.recorder.requested({ stream, model: body.model });
  return { kind: 'unified', operation, body, clientBytes: context.request.body, stream, ...commonFields(context, { unified: true }) };
}

/**
 * A chat, completions or embeddings request whose body the gateway made itself (a rendered prompt)
 * with the caller's headers and options, as `fromHttp` would read them.
 */
export function unifiedFromBody(operation: Operation, body: JsonObject, context: RouteContext): UnifiedRequest {
  validateInferenceBody(operation, body);
  const stream = body.stream === true;
  context.recorder.requested({ stream, model: body.model });
  return { kind: 'unified', operation, body, stream, ...commonFields(context, { unified: true }) };
}

function passthroughFromHttp(context: RouteContext): PassthroughRequest {
  const { request } = context;
  if (!passthroughMethods.has(request.method)) {
    throw new GatewayError(405, `Pass-through supports GET, POST, PUT and DELETE; got ${request.method}.`, { code: 'method_not_allowed', headers: { allow: 'GET, POST, PUT, DELETE' } });
  }
  const providerPath = passthroughPath(request.pathParameters.proxy ?? '');
  const bytes = request.method === 'GET' || request.body.length === 0 ? undefined : request.body;
  return { kind: 'passthrough', method: request.method, providerPath, rawQuery: request.rawQuery, bytes, ...commonFields(context, { unified: false }) };
}

/**
 * Pass-through sends every client header on and is never cached, so `x-gateway-forward-headers`
 * and the cache headers mean nothing there and are not read.
 */
function commonFields({ request, auth, trace }: RouteContext, { unified }: { unified: boolean }): InferenceFields {
  const headers = request.headers;
  const config = readConfigHeader(headers);
  const timeoutMs = readRequestTimeoutHeader(headers);
  const forwardHeaderNames = unified ? readForwardHeaderNames(headers) : [];
  const cache = unified ? readCacheHeaders(headers) : { forceRefresh: false };
  return {
    caller: { organisationId: auth.organisationId, workspaceId: auth.workspaceId, keyId: auth.keyId },
    options: { config, credentials: readHeaderCredentials(headers), timeoutMs, forwardHeaderNames, cache },
    metadata: trace.metadata ?? {},
    path: request.path,
    headers,
  };
}
