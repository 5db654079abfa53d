import { describe, expect, it } from 'vitest';
import { emfLine, emfMetricsOn } from '../../lib/observability/emf-metrics';
import { otlpJson, otlpProtobuf } from '../../lib/observability/otlp-encoding';
import { otlpSettings } from '../../lib/observability/otlp-settings';
import type { RequestLogRecord } from '../../lib/observability/request-log';
import { requestSpans, spanParent } from '../../lib/observability/request-spans';

const record: RequestLogRecord = {
  type: 'gateway.request',
  id: 'log_1',
  trace_id: 'log_1',
  provider: 'openai',
  model: 'gpt-4o-mini',
  method: 'POST',
  path: '/v1/chat/completions',
  status: 200,
  latency_ms: 12.5,
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  cost: 0.0001,
  cache_status: 'MISS',
  request_id: 'req_1',
  created_at: '2026-11-27T10:00:00.000Z',
};

describe('OTLP settings', () => {
  it('are off without an endpoint, and when the SDK or the traces exporter is turned off', () => {
    expect(otlpSettings({})).toBeUndefined();
    expect(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
  });

  it('read the endpoint, headers, timeout and protocol as the specification writes them', () => {
    const settings = otlpSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%20b,X-Tenant=t1',
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '2500',
      OTEL_SERVICE_NAME: 'gw',
    })!;
    expect(settings.url.href).toBe('http://collector:4318/v1/traces');
    expect(settings.headers).toEqual({ 'api-key': 'a b', 'x-tenant': 't1' });
    expect(settings).toMatchObject({ timeoutMs: 2500, serviceName: 'gw', protocol: 'http/protobuf' });
    const signal = otlpSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/ingest', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })!;
    expect(signal.url.href).toBe('https://traces.example/ingest');
    expect(signal.protocol).toBe('http/json');
  });

  it('turn export off, never a request away, when misconfigured', () => {
    expect(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBeUndefined();
    expect(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).toBeUndefined();
  });
});

describe('the spans of a request', () => {
  it('join the trace a valid traceparent names, under its span', () => {
    expect(spanParent({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }, 'log_1')).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      parentSpanId: '00f067aa0ba902b7',
    });
    // An all-zero id or version ff is invalid: the gateway's own trace id is used instead.
    expect(spanParent({ traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` }, 'A'.repeat(32))).toEqual({ traceId: 'a'.repeat(32) });
    expect(spanParent({}, 'checkout').traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(spanParent({}, 'checkout')).toEqual(spanParent({}, 'checkout'));
  });

  it('are a server span over the request and a client span per attempt', () => {
    const startedAt = 1_764_237_600_000;
    const attempts = [
      { provider: 'openai', model: 'error-500', startedAt: startedAt + 1, endedAt: startedAt + 4, status: 500 },
      { provider: 'anthropic', model: 'claude', startedAt: startedAt + 4, endedAt: startedAt + 12, status: 200 },
    ];
    const [server, failed, answered] = requestSpans(record, attempts, { traceId: 'b'.repeat(32) }, startedAt);
    expect(server).toMatchObject({ kind: 2, name: 'POST /v1/chat/completions', startNs: 1_764_237_600_000_000_000n, endNs: 1_764_237_600_012_500_000n });
    expect(server!.parentSpanId).toBeUndefined();
    expect(server!.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 10, 'gateway.cost_usd': 0.0001, 'gateway.cache_status': 'MISS' });
    expect(failed).toMatchObject({ kind: 3, parentSpanId: server!.spanId, name: 'openai error-500', status: { code: 2 } });
    expect(answered).toMatchObject({ kind: 3, name: 'anthropic claude', status: { code: 0 } });
  });
});

/** Reads protobuf's wire format into field number → values (nested messages left as bytes). */
function readProto(bytes: Buffer): Map<number, Array<bigint | Buffer>> {
  const fields = new Map<number, Array<bigint | Buffer>>();
  let at = 0;
  const varint = () => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = bytes[at++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < bytes.length) {
    const tag = Number(varint());
    const [field, wire] = [tag >> 3, tag & 7];
    let value: bigint | Buffer;
    if (wire === 0) value = varint();
    else if (wire === 1) {
      value = bytes.readBigUInt64LE(at);
      at += 8;
    } else if (wire === 2) {
      const length = Number(varint());
      value = bytes.subarray(at, at + length);
      at += length;
    } else throw new Error(`wire type ${wire}`);
    fields.set(field, [...(fields.get(field) ?? []), value]);
  }
  return fields;
}

describe('OTLP encodings', () => {
  const spans = requestSpans(
    record,
    [{ provider: 'openai', model: 'gpt-4o-mini', startedAt: 1000, endedAt: 1005.5, status: 200 }],
    { traceId: 'c'.repeat(32), parentSpanId: 'd'.repeat(16) },
    1000,
  );

  it('JSON: hex ids, 64-bit integers as strings, typed attribute values', () => {
    const body = JSON.parse(otlpJson(spans, 'gw'));
    const [server, client] = body.resourceSpans[0].scopeSpans[0].spans;
    expect(body.resourceSpans[0].resource.attributes).toEqual([{ key: 'service.name', value: { stringValue: 'gw' } }]);
    expect(server).toMatchObject({ traceId: 'c'.repeat(32), parentSpanId: 'd'.repeat(16), kind: 2, startTimeUnixNano: '1000000000' });
    expect(server.attributes).toContainEqual({ key: 'http.response.status_code', value: { intValue: '200' } });
    expect(server.attributes).toContainEqual({ key: 'gateway.cost_usd', value: { doubleValue: 0.0001 } });
    expect(client).toMatchObject({ parentSpanId: server.spanId, endTimeUnixNano: '1005500000' });
  });

  it('protobuf: the same request in the wire format of trace.proto', () => {
    const request = readProto(otlpProtobuf(spans, 'gw'));
    const resourceSpans = readProto(request.get(1)![0] as Buffer);
    const resource = readProto(resourceSpans.get(1)![0] as Buffer);
    const serviceName = readProto(resource.get(1)![0] as Buffer);
    expect((serviceName.get(1)![0] as Buffer).toString()).toBe('service.name');
    expect((readProto(serviceName.get(2)![0] as Buffer).get(1)![0] as Buffer).toString()).toBe('gw');
    const scopeSpans = readProto(resourceSpans.get(2)![0] as Buffer);
    const [server, client] = scopeSpans.get(2)!.map((bytes) => readProto(bytes as Buffer));
    expect((server!.get(1)![0] as Buffer).toString('hex')).toBe('c'.repeat(32));
    expect((server!.get(4)![0] as Buffer).toString('hex')).toBe('d'.repeat(16));
    expect((server!.get(5)![0] as Buffer).toString()).toBe('POST /v1/chat/completions');
    expect(server!.get(6)).toEqual([2n]);
    expect(server!.get(7)).toEqual([1_000_000_000n]);
    expect((client!.get(4)![0] as Buffer).toString('hex')).toBe(spans[0]!.spanId);
    expect(client!.get(8)).toEqual([1_005_500_000n]);
    const statusCode = readProto(
      server!
        .get(9)!
        .map((bytes) => readProto(bytes as Buffer))
        .find((kv) => (kv.get(1)![0] as Buffer).toString() === 'http.response.status_code')!
        .get(2)![0] as Buffer,
    );
    expect(statusCode.get(3)).toEqual([200n]);
  });
});

describe('embedded-metric-format lines', () => {
  it('are written on Lambda unless turned off, and elsewhere only when turned on', () => {
    expect(emfMetricsOn({ AWS_LAMBDA_FUNCTION_NAME: 'gw-chat' })).toBe(true);
    expect(emfMetricsOn({ AWS_LAMBDA_FUNCTION_NAME: 'gw-chat', GATEWAY_EMF_METRICS: 'off' })).toBe(false);
    expect(emfMetricsOn({})).toBe(false);
    expect(emfMetricsOn({ GATEWAY_EMF_METRICS: 'on' })).toBe(true);
  });

  it('carry the request as metrics per provider and model, and leave out a cost the table could not give', () => {
    const line = JSON.parse(emfLine(record, 'Gw')!);
    expect(line).toMatchObject({
      provider: 'openai',
      model: 'gpt-4o-mini',
      requests: 1,
      errors: 0,
      latency: 12.5,
      input_tokens: 10,
      output_tokens: 5,
      cost_usd: 0.0001,
    });
    expect(line._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'Gw', Dimensions: [['provider', 'model'], ['provider']] });
    const unpriced = JSON.parse(emfLine({ ...record, cost: null, status: 502 })!);
    expect(unpriced.cost_usd).toBeUndefined();
    expect(unpriced.errors).toBe(1);
    expect(unpriced._aws.CloudWatchMetrics[0].Metrics.map((metric: { Name: string }) => metric.Name)).not.toContain('cost_usd');
    expect(emfLine({ ...record, provider: undefined })).toBeUndefined();
  });
});
