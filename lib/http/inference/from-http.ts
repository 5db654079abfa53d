import { GatewayError } from '../../core/errors';
import { readJsonObject } from '../json-body';
import type { RouteContext } from '../pipeline';
import type { JsonObject, Operation } from '../../providers/types';
import {
  inferenceRequest,
  type InferenceCaller,
  type InferenceFields,
  type InferenceRequest,
  type PassthroughRequest,
  type UnifiedRequest,
} from '../../inference/inference-request';
import { passthroughPath } from '../../inference/passthrough-path';
import {
  readCacheHeaders,
  readConfigHeader,
  readForwardHeaderNames,
  readProviderCredentials,
  readRequestTimeoutHeader,
  readStrictComplianceHeader,
} from './option-headers';

const passthroughMethods = new Set(['GET', 'POST', 'PUT', 'DELETE']);

type HttpFields = Omit<InferenceFields, 'caller'>;

/**
 * The inference request an HTTP request carries: the body read and validated, then every
 * `x-gateway-*` option read, so a bad header is a 400 before any provider is chosen. The model and
 * stream flag reach the log even when a header is refused.
 */
export function fromHttp(route: Operation | 'passthrough', context: RouteContext): Promise<InferenceRequest> {
  return route === 'passthrough' ? passthroughFromHttp(context) : unifiedFromHttp(route, context);
}

function unifiedFromHttp(operation: Operation, context: RouteContext): Promise<UnifiedRequest> {
  return unifiedFromBody(operation, readJsonObject(context.request), context, context.request.body);
}

/**
 * A chat, completions or embeddings request whose body the gateway made itself (a rendered prompt)
 * with the caller's headers and options, as `fromHttp` would read them.
 */
export async function unifiedFromBody(operation: Operation, body: JsonObject, context: RouteContext, clientBytes?: Buffer): Promise<UnifiedRequest> {
  const request = unifiedRecorded(operation, body, context, clientBytes);
  return { ...request, ...(await unifiedHttpFields(context)) };
}

/** `unifiedFromBody` for a caller that builds its requests synchronously, from fields it read once before (`unifiedHttpFields`). */
export function unifiedWithFields(operation: Operation, body: JsonObject, context: RouteContext, fields: HttpFields): UnifiedRequest {
  return { ...unifiedRecorded(operation, body, context), ...fields };
}

/** What a unified request's headers carry: its gateway options, metadata, path and headers. */
export const unifiedHttpFields = (context: RouteContext): Promise<HttpFields> => httpFields(context, { unified: true });

function unifiedRecorded(operation: Operation, body: JsonObject, context: RouteContext, clientBytes?: Buffer) {
  const request = inferenceRequest({ kind: 'unified', operation, body, clientBytes, caller: callerOf(context) });
  // Before the headers are read, so the model and stream flag reach the log even when one is refused.
  context.recorder.requested({ stream: request.stream, model: body.model });
  return request;
}

async function passthroughFromHttp(context: RouteContext): Promise<PassthroughRequest> {
  const { request } = context;
  if (!passthroughMethods.has(request.method)) {
    throw new GatewayError(405, `Pass-through supports GET, POST, PUT and DELETE; got ${request.method}.`, {
      code: 'method_not_allowed',
      headers: { allow: 'GET, POST, PUT, DELETE' },
    });
  }
  const providerPath = passthroughPath(request.pathParameters.proxy ?? '');
  const bytes = request.method === 'GET' || request.body.length === 0 ? undefined : request.body;
  const made = inferenceRequest({ kind: 'passthrough', method: request.method, providerPath, rawQuery: request.rawQuery, bytes, caller: callerOf(context) });
  return { ...made, ...(await httpFields(context, { unified: false })) };
}

const callerOf = ({ auth }: RouteContext): InferenceCaller => ({ organisationId: auth.organisationId, workspaceId: auth.workspaceId, keyId: auth.keyId });

/**
 * Pass-through sends every client header on and is never cached, so `x-gateway-forward-headers`
 * and the cache headers mean nothing there and are not read.
 */
async function httpFields({ request, trace }: RouteContext, { unified }: { unified: boolean }): Promise<HttpFields> {
  const headers = request.headers;
  const config = await readConfigHeader(headers);
  const timeoutMs = readRequestTimeoutHeader(headers);
  const forwardHeaderNames = unified ? readForwardHeaderNames(headers) : [];
  const cache = unified ? readCacheHeaders(headers) : { forceRefresh: false };
  return {
    options: {
      config,
      credentials: readProviderCredentials(headers),
      timeoutMs,
      forwardHeaderNames,
      cache,
      strictApiCompliance: readStrictComplianceHeader(headers),
    },
    metadata: trace.metadata ?? {},
    path: request.path,
    headers,
  };
}
