import { finished, type Readable } from 'node:stream';
import { authenticate, type AuthContext } from '../auth/authenticate';
import { GatewayError, toGatewayError } from '../core/errors';
import { newId } from '../core/ids';
import { isReadable } from '../core/readable';
import { RequestRecorder } from '../observability/request-recorder';
import { reportRequest } from '../observability/request-telemetry';
import { jsonResponse } from './responses';
import { echoPortkeyHeaders, withPortkeyAliases } from './portkey-headers';
import { authorizeToken } from './token-scope';
import { readTraceContext, type TraceContext } from '../observability/trace';
import type { GatewayRequest, GatewayResponse } from './types';

/** What a route gets: the request, who is calling, the trace, and the recorder of its log line. */
export interface RouteContext {
  request: GatewayRequest;
  auth: AuthContext;
  trace: TraceContext;
  recorder: RequestRecorder;
  /** Work (state writes) that must finish before the invocation ends but must not delay the answer. */
  waitUntil(work: Promise<unknown>): void;
}

export type RouteHandler = ((context: RouteContext) => Promise<GatewayResponse>) & {
  /** The 413 for a body above the limit, for a route that can say where a larger body goes instead. */
  readonly tooLarge?: (bytes: number, request: GatewayRequest) => GatewayError;
  /** Whether the request is for a route anyone may call: it is answered without reading a key. */
  readonly isPublic?: (request: GatewayRequest) => boolean;
  /** The error body in the shape of the API a route speaks, for a route whose clients expect another than the gateway's. */
  readonly errorBody?: (error: GatewayError) => unknown;
};

/** Decoded request bodies above this size are refused (API Gateway's and Lambda's limits sit above it). */
export const maxRequestBodyBytes = 4 * 1024 * 1024;

/**
 * Runs one HTTP request through the steps every route shares: size limit, tracing headers,
 * gateway authentication (unless the route is public), the route itself, the error body, and the request log written once the
 * response body is complete.
 */
export async function runRoute(sent: GatewayRequest, route: RouteHandler, waitUntil: (work: Promise<unknown>) => void): Promise<GatewayResponse> {
  const { headers, portkey } = withPortkeyAliases(sent.headers);
  const request = portkey ? { ...sent, headers } : sent;
  const recorder = new RequestRecorder(newId('log'));
  // Writes that start once the record is complete (budget and token settling) are handed over
  // then; waiting for the record keeps the invocation open until they have been.
  waitUntil(recorder.written);
  reportRequest(recorder, request.headers, waitUntil);
  let trace: TraceContext | undefined;
  let response: GatewayResponse;
  try {
    if (request.body.length > maxRequestBodyBytes) {
      throw (
        route.tooLarge?.(request.body.length, request) ??
        new GatewayError(413, `Request body is ${request.body.length} bytes; the limit is ${maxRequestBodyBytes} bytes (4 MB).`, {
          code: 'request_too_large',
        })
      );
    }
    trace = readTraceContext(request.headers, recorder.id);
    recorder.traced(trace);
    response = route.isPublic?.(request)
      ? await route({ request, auth: noCaller, trace, recorder, waitUntil })
      : await runAuthenticated(request, route, { trace, recorder, waitUntil });
  } catch (error) {
    const gatewayError = toGatewayError(error);
    if (gatewayError.status >= 500 && gatewayError.code === 'internal_error') console.error('Unhandled error', error);
    recorder.failed(gatewayError);
    response = jsonResponse(gatewayError.status, route.errorBody?.(gatewayError) ?? gatewayError.toBody(), gatewayError.headers);
  }
  const traceId = trace?.traceId ?? request.headers['x-gateway-trace-id']?.slice(0, 256) ?? recorder.id;
  response.headers['x-gateway-trace-id'] = traceId;
  if (portkey) echoPortkeyHeaders(response.headers);

  const end = { method: request.method, path: request.path, status: response.status, requestId: request.requestId, traceId };
  if (isReadable(response.body)) {
    // The readable side is what the client gets; a transform's input side may be cut off early.
    finished(response.body as Readable, { writable: false }, (error) => {
      if (error) recorder.bodyBroke(error);
      recorder.finish(end);
    });
  } else {
    recorder.finish(end);
  }
  return response;
}

async function runAuthenticated(request: GatewayRequest, route: RouteHandler, context: Omit<RouteContext, 'request' | 'auth'>): Promise<GatewayResponse> {
  const auth = await authenticate(request.headers);
  context.recorder.authenticated(auth);
  authorizeToken(auth, request);
  // A gateway token sent in Authorization is the gateway's credential, never a provider key.
  const routed = auth.token?.via === 'authorization' ? { ...request, headers: withoutAuthorization(request.headers) } : request;
  return route({ ...context, request: routed, auth });
}

/**
 * The caller of a public route: nobody. Reading it is a route that should not have been public,
 * so it fails loudly (a 500) rather than answer with some workspace's data.
 */
const noCaller = new Proxy({} as AuthContext, {
  get(_target, property) {
    throw new Error(`A public route read the caller (auth.${String(property)}).`);
  },
});

function withoutAuthorization(headers: Record<string, string>): Record<string, string> {
  const { authorization: _authorization, ...rest } = headers;
  return rest;
}
