import { finished, type Readable } from 'node:stream';
import { authenticate, type AuthContext } from '../auth/authenticate';
import { newId } from '../core/ids';
import { emitRequestLog, type RequestLogFields, type RequestLogRecord } from '../observability/request-log';
import { GatewayError, toGatewayError } from '../core/errors';
import { jsonResponse } from './responses';
import { readTraceContext, type TraceContext } from './trace';
import type { GatewayRequest, GatewayResponse } from './types';

/** What a route gets: the request, who is calling, the trace, and log fields it may fill in. */
export interface RouteContext {
  request: GatewayRequest;
  auth: AuthContext;
  trace: TraceContext;
  log: RequestLogFields;
  /** Work (state writes) that must finish before the invocation ends but must not delay the answer. */
  waitUntil(work: Promise<unknown>): void;
}

export type RouteHandler = (context: RouteContext) => Promise<GatewayResponse>;

/** Decoded request bodies above this size are refused (API Gateway's and Lambda's limits sit above it). */
export const maxRequestBodyBytes = 4 * 1024 * 1024;

/**
 * Runs one HTTP request through the steps every route shares: size limit, tracing headers,
 * gateway authentication, the route itself, the error body, and the request log written once the
 * response body is complete.
 */
export async function runRoute(request: GatewayRequest, route: RouteHandler, waitUntil: (work: Promise<unknown>) => void): Promise<GatewayResponse> {
  const startedAt = performance.now();
  const logId = newId('log');
  const log: RequestLogFields = {};
  let trace: TraceContext | undefined;
  let auth: AuthContext | undefined;
  let response: GatewayResponse;
  try {
    if (request.body.length > maxRequestBodyBytes) {
      throw new GatewayError(413, `Request body is ${request.body.length} bytes; the limit is ${maxRequestBodyBytes} bytes (4 MB).`, {
        code: 'request_too_large',
      });
    }
    trace = readTraceContext(request.headers, logId);
    auth = await authenticate(request.headers);
    response = await route({ request, auth, trace, log, waitUntil });
  } catch (error) {
    const gatewayError = toGatewayError(error);
    if (gatewayError.status >= 500 && gatewayError.code === 'internal_error') console.error('Unhandled error', error);
    log.error = { message: gatewayError.message.slice(0, 2000), code: gatewayError.code };
    response = jsonResponse(gatewayError.status, gatewayError.toBody(), gatewayError.headers);
  }
  const traceId = trace?.traceId ?? request.headers['x-gateway-trace-id']?.slice(0, 256) ?? logId;
  response.headers['x-gateway-trace-id'] = traceId;

  const writeLog = (streamError?: Error | null) => {
    if (streamError && !log.error) log.error = { message: String(streamError.message).slice(0, 2000), code: 'stream_error' };
    emitRequestLog(buildRecord(request, logId, response.status, traceId, trace, auth, log, performance.now() - startedAt));
  };
  if (typeof response.body === 'object' && 'pipe' in response.body) {
    const body = response.body as Readable;
    // The readable side is what the client gets; a transform's input side may be cut off early.
    finished(body, { writable: false }, (error) => writeLog(error));
  } else {
    writeLog();
  }
  return response;
}

function buildRecord(
  request: GatewayRequest,
  id: string,
  status: number,
  traceId: string,
  trace: TraceContext | undefined,
  auth: AuthContext | undefined,
  fields: RequestLogFields,
  latencyMs: number,
): RequestLogRecord {
  return {
    type: 'gateway.request',
    id,
    trace_id: traceId,
    span_id: trace?.spanId,
    parent_span_id: trace?.parentSpanId,
    span_name: trace?.spanName,
    metadata: trace?.metadata,
    organisation_id: auth?.organisationId,
    workspace_id: auth?.workspaceId,
    api_key_id: auth?.keyId,
    ...fields,
    method: request.method,
    path: request.path,
    status,
    latency_ms: Math.round(latencyMs * 1000) / 1000,
    request_id: request.requestId,
    created_at: new Date().toISOString(),
  };
}
