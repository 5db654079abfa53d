import { badRequest } from '../core/errors';
import { JsonTooDeepError, parseClientJson } from '../wire/client-json';

export interface TraceContext {
  traceId: string;
  spanId?: string;
  parentSpanId?: string;
  spanName?: string;
  metadata?: Record<string, unknown>;
}

const maxIdLength = 256;

/**
 * Reads the tracing headers. Without `x-gateway-trace-id` the request is a trace of its own, named
 * by its log record's id (`generatedTraceId`): such a trace needs no trace index entry to be found.
 */
export function readTraceContext(headers: Record<string, string>, generatedTraceId: string): TraceContext {
  const trace: TraceContext = { traceId: idHeader(headers, 'x-gateway-trace-id') ?? generatedTraceId };
  const spanId = idHeader(headers, 'x-gateway-span-id');
  if (spanId) trace.spanId = spanId;
  const parentSpanId = idHeader(headers, 'x-gateway-parent-span-id');
  if (parentSpanId) trace.parentSpanId = parentSpanId;
  const spanName = idHeader(headers, 'x-gateway-span-name');
  if (spanName) trace.spanName = spanName;
  const metadata = headers['x-gateway-metadata'];
  if (metadata !== undefined) trace.metadata = parseMetadata(metadata);
  return trace;
}

function idHeader(headers: Record<string, string>, name: string): string | undefined {
  const value = headers[name]?.trim();
  if (!value) return undefined;
  if (value.length > maxIdLength) throw badRequest(`${name} must be at most ${maxIdLength} characters.`, name, 'invalid_header');
  return value;
}

function parseMetadata(raw: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = parseClientJson(raw);
  } catch (error) {
    if (error instanceof JsonTooDeepError) throw badRequest(`x-gateway-metadata is refused: ${error.message}.`, 'x-gateway-metadata', 'invalid_metadata');
    throw badRequest(
      'x-gateway-metadata must be a JSON object, for example {"_user":"alice","env":"prod"}; the value sent is not valid JSON.',
      'x-gateway-metadata',
      'invalid_metadata',
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw badRequest('x-gateway-metadata must be a JSON object, for example {"_user":"alice"}.', 'x-gateway-metadata', 'invalid_metadata');
  }
  return parsed as Record<string, unknown>;
}
