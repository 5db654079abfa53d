/**
 * The spans of one request: a server span for the request and a client span for each provider
 * attempt under it, made from its finished log record. Attribute names follow OpenTelemetry's
 * semantic conventions for HTTP and generative AI where they have one, `gateway.*` otherwise.
 * @see https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/
 */
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../core/sha256';
import type { RequestLogRecord } from './request-log';

export type AttributeValue = string | number | boolean;

export interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind: 2 server, 3 client. */
  kind: 2 | 3;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttributeValue>;
  /** OTLP's StatusCode: 0 unset, 2 error. */
  status: { code: 0 | 2; message?: string };
}

/** One attempt at a provider, as the core timed it. */
export interface AttemptTiming {
  provider: string;
  model?: string;
  /** Epoch milliseconds (fractional). */
  startedAt: number;
  endedAt: number;
  status: number;
}

/** Where the request's spans hang: a W3C `traceparent`'s trace and parent, or the gateway's trace id. */
export interface SpanParent {
  traceId: string;
  parentSpanId?: string;
}

const traceparentPattern = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const hex32 = /^[0-9a-f]{32}$/;

/**
 * The trace the spans join: a valid `traceparent` (W3C Trace Context) gives the trace and the
 * parent span; otherwise an `x-gateway-trace-id` of 32 hex digits is the trace id as it is, and any
 * other trace id is hashed to one, so the same gateway trace is always the same OTLP trace.
 */
export function spanParent(headers: Record<string, string>, gatewayTraceId: string): SpanParent {
  const match = traceparentPattern.exec(headers.traceparent?.trim().toLowerCase() ?? '');
  if (match && match[1] !== 'ff' && !/^0+$/.test(match[2]!) && !/^0+$/.test(match[3]!)) return { traceId: match[2]!, parentSpanId: match[3]! };
  const lower = gatewayTraceId.toLowerCase();
  return { traceId: hex32.test(lower) && !/^0+$/.test(lower) ? lower : sha256Hex(gatewayTraceId).slice(0, 32) };
}

const newSpanId = () => randomBytes(8).toString('hex');
const nanos = (epochMs: number) => BigInt(Math.round(epochMs * 1000)) * 1000n;

export function requestSpans(record: RequestLogRecord, attempts: readonly AttemptTiming[], parent: SpanParent, startedAt: number): Span[] {
  const endedAt = startedAt + record.latency_ms;
  const requestSpan: Span = {
    traceId: parent.traceId,
    spanId: newSpanId(),
    name: `${record.method} ${record.path}`,
    kind: 2,
    startNs: nanos(startedAt),
    endNs: nanos(endedAt),
    attributes: requestAttributes(record),
    status: record.status >= 500 ? { code: 2, message: record.error?.message } : { code: 0 },
  };
  if (parent.parentSpanId) requestSpan.parentSpanId = parent.parentSpanId;
  const spans = [requestSpan];
  for (const attempt of attempts) {
    const attributes: Record<string, AttributeValue> = { 'gen_ai.system': attempt.provider, 'http.response.status_code': attempt.status };
    if (attempt.model) attributes['gen_ai.request.model'] = attempt.model;
    spans.push({
      traceId: parent.traceId,
      spanId: newSpanId(),
      parentSpanId: requestSpan.spanId,
      name: attempt.model ? `${attempt.provider} ${attempt.model}` : attempt.provider,
      kind: 3,
      startNs: nanos(attempt.startedAt),
      endNs: nanos(attempt.endedAt),
      attributes,
      status: attempt.status >= 400 || attempt.status === 0 ? { code: 2 } : { code: 0 },
    });
  }
  return spans;
}

function requestAttributes(record: RequestLogRecord): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {
    'http.request.method': record.method,
    'url.path': record.path,
    'http.response.status_code': record.status,
    'gateway.request_id': record.id,
    'gateway.trace_id': record.trace_id,
  };
  const optional: Array<[string, AttributeValue | null | undefined]> = [
    ['gen_ai.system', record.provider],
    ['gen_ai.request.model', record.model],
    ['gen_ai.usage.input_tokens', record.usage?.prompt_tokens],
    ['gen_ai.usage.output_tokens', record.usage?.completion_tokens],
    ['gateway.cost_usd', record.cost],
    ['gateway.cache_status', record.cache_status],
    ['gateway.workspace_id', record.workspace_id],
    ['gateway.stream', record.stream],
    ['error.type', record.error?.code ?? undefined],
  ];
  for (const [name, value] of optional) if (value !== undefined && value !== null) attributes[name] = value;
  return attributes;
}
