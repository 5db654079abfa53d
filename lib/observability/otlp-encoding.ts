/**
 * An OTLP trace export request (`ExportTraceServiceRequest`) of the gateway's spans, in OTLP/HTTP's
 * two encodings: JSON (ids as hex, 64-bit integers as strings, enums as numbers) and binary
 * protobuf, written here for the few messages it needs rather than with a protobuf library.
 * @see https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding
 * @see https://github.com/open-telemetry/opentelemetry-proto/blob/main/opentelemetry/proto/trace/v1/trace.proto
 */
import type { AttributeValue, Span } from './request-spans';

const scopeName = 'llm-gateway';

// ---- JSON

function jsonValue(value: AttributeValue): Record<string, unknown> {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
}

const jsonAttributes = (attributes: Record<string, AttributeValue>) => Object.entries(attributes).map(([key, value]) => ({ key, value: jsonValue(value) }));

export function otlpJson(spans: readonly Span[], serviceName: string): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: jsonAttributes({ 'service.name': serviceName }) },
        scopeSpans: [
          {
            scope: { name: scopeName },
            spans: spans.map((span) => ({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
              name: span.name,
              kind: span.kind,
              startTimeUnixNano: String(span.startNs),
              endTimeUnixNano: String(span.endNs),
              attributes: jsonAttributes(span.attributes),
              status: span.status.message ? { code: span.status.code, message: span.status.message } : { code: span.status.code },
            })),
          },
        ],
      },
    ],
  });
}

// ---- protobuf

/** Protobuf's wire types. */
const varint = 0;
const fixed64 = 1;
const lengthDelimited = 2;

/** A message being written: its fields' bytes in order. */
class ProtoWriter {
  private readonly parts: Buffer[] = [];

  private tag(field: number, wireType: number): void {
    this.raw(encodeVarint(BigInt((field << 3) | wireType)));
  }

  private raw(bytes: Buffer): void {
    this.parts.push(bytes);
  }

  bytes(field: number, value: Buffer): this {
    this.tag(field, lengthDelimited);
    this.raw(encodeVarint(BigInt(value.length)));
    this.raw(value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, Buffer.from(value, 'utf8'));
  }

  message(field: number, message: ProtoWriter): this {
    return this.bytes(field, message.finish());
  }

  varint(field: number, value: bigint | number | boolean): this {
    this.tag(field, varint);
    this.raw(encodeVarint(typeof value === 'boolean' ? (value ? 1n : 0n) : BigInt.asUintN(64, BigInt(value))));
    return this;
  }

  fixed64(field: number, value: bigint): this {
    this.tag(field, fixed64);
    const bytes = Buffer.alloc(8);
    bytes.writeBigUInt64LE(value);
    this.raw(bytes);
    return this;
  }

  double(field: number, value: number): this {
    this.tag(field, fixed64);
    const bytes = Buffer.alloc(8);
    bytes.writeDoubleLE(value);
    this.raw(bytes);
    return this;
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}

function encodeVarint(value: bigint): Buffer {
  const bytes: number[] = [];
  let rest = value;
  do {
    let byte = Number(rest & 0x7fn);
    rest >>= 7n;
    if (rest > 0n) byte |= 0x80;
    bytes.push(byte);
  } while (rest > 0n);
  return Buffer.from(bytes);
}

/** `AnyValue`: string 1, bool 2, int 3, double 4. */
function protoValue(value: AttributeValue): ProtoWriter {
  const any = new ProtoWriter();
  if (typeof value === 'string') return any.string(1, value);
  if (typeof value === 'boolean') return any.varint(2, value);
  return Number.isInteger(value) ? any.varint(3, value) : any.double(4, value);
}

/** `KeyValue` list: key 1, value 2, each at `field` of the enclosing message. */
function protoAttributes(writer: ProtoWriter, field: number, attributes: Record<string, AttributeValue>): void {
  for (const [key, value] of Object.entries(attributes)) writer.message(field, new ProtoWriter().string(1, key).message(2, protoValue(value)));
}

/** `Span`: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6, start 7, end 8, attributes 9, status 15. */
function protoSpan(span: Span): ProtoWriter {
  const writer = new ProtoWriter().bytes(1, Buffer.from(span.traceId, 'hex')).bytes(2, Buffer.from(span.spanId, 'hex'));
  if (span.parentSpanId) writer.bytes(4, Buffer.from(span.parentSpanId, 'hex'));
  writer.string(5, span.name).varint(6, span.kind).fixed64(7, span.startNs).fixed64(8, span.endNs);
  protoAttributes(writer, 9, span.attributes);
  // `Status`: message 2, code 3.
  const status = new ProtoWriter();
  if (span.status.message) status.string(2, span.status.message);
  if (span.status.code !== 0) status.varint(3, span.status.code);
  return writer.message(15, status);
}

export function otlpProtobuf(spans: readonly Span[], serviceName: string): Buffer {
  // Resource: attributes 1. ScopeSpans: scope 1, spans 2. ResourceSpans: resource 1, scope_spans 2.
  const resource = new ProtoWriter();
  protoAttributes(resource, 1, { 'service.name': serviceName });
  const scopeSpans = new ProtoWriter().message(1, new ProtoWriter().string(1, scopeName));
  for (const span of spans) scopeSpans.message(2, protoSpan(span));
  const resourceSpans = new ProtoWriter().message(1, resource).message(2, scopeSpans);
  return new ProtoWriter().message(1, resourceSpans).finish();
}
