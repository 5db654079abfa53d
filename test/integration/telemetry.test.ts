/**
 * OpenTelemetry export and CloudWatch metrics from a running gateway: a gateway started with the
 * standard OTLP variables sends one server span per request and one client span per provider
 * attempt to a collector on loopback, in the trace a `traceparent` names (or its own), and writes
 * an embedded-metric-format line per inference request.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { env } from '../support/gateway-client';
import { pollUntil } from '../support/poll';
import { spawnGateway, type SpawnedGateway } from '../support/spawn-gateway';

interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

type ExportedSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes: Array<{ key: string; value: any }> };

let collector: Server;
let collectorUrl: string;
const received: Received[] = [];
let upstream: FakeUpstream;
let gateway: SpawnedGateway;

beforeAll(async () => {
  collector = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  upstream = await startFakeUpstream();
  const { endpoints, dataDir, adminKey } = env();
  // A second gateway on the shared emulators, with the test gateway's key, and telemetry on.
  gateway = await spawnGateway({
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_DYNAMODB_ENDPOINT: endpoints.dynamodb,
    GATEWAY_SQS_ENDPOINT: endpoints.sqs,
    GATEWAY_S3_ENDPOINT: endpoints.s3,
    GATEWAY_ADMIN_KEY: adminKey,
    OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=secret%20value',
    OTEL_SERVICE_NAME: 'gateway-under-test',
    GATEWAY_EMF_METRICS: 'on',
  });
});

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await new Promise((resolve) => collector?.close(resolve));
});

async function chat(headers: Record<string, string>, model = 'gpt-4o-mini'): Promise<Response> {
  return fetch(`${gateway.url}/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer sk-provider',
      'x-gateway-api-key': env().adminKey,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': `${upstream.url}/v1`,
      ...headers,
    },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'trace me' }] }),
  });
}

/** The spans of one trace the collector has received, once there are `count`. */
async function spansOf(traceId: string, count: number): Promise<ExportedSpan[]> {
  const all = () => received.flatMap((each) => each.body.resourceSpans.flatMap((resource: any) => resource.scopeSpans.flatMap((scope: any) => scope.spans)));
  return pollUntil(
    async () => all().filter((span: ExportedSpan) => span.traceId === traceId),
    (spans) => spans.length >= count,
    10_000,
  );
}

const attribute = (span: ExportedSpan, key: string) => span.attributes.find((each) => each.key === key)?.value;

describe('OpenTelemetry export', () => {
  it('sends a server span and a client span per attempt, in the trace a traceparent names', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const answer = await chat({ traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    expect(answer.status).toBe(200);
    const spans = await spansOf(traceId, 2);
    const server = spans.find((span) => span.kind === 2)!;
    const client = spans.find((span) => span.kind === 3)!;
    expect(server).toMatchObject({ parentSpanId: '00f067aa0ba902b7', name: 'POST /v1/chat/completions' });
    expect(attribute(server, 'http.response.status_code')).toEqual({ intValue: '200' });
    expect(attribute(server, 'gen_ai.system')).toEqual({ stringValue: 'openai' });
    expect(Number(attribute(server, 'gen_ai.usage.input_tokens').intValue)).toBeGreaterThan(0);
    expect(client).toMatchObject({ parentSpanId: server.spanId, name: 'openai gpt-4o-mini' });
    const exported = received.find((each) => JSON.stringify(each.body).includes(traceId))!;
    expect(exported.headers['x-collector-key']).toBe('secret value');
    expect(exported.headers['content-type']).toBe('application/json');
    expect(exported.body.resourceSpans[0].resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'gateway-under-test' } });
  });

  it('gives a fallback one client span per attempt, the failed one marked as an error', async () => {
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'openai', api_key: 'sk-a', custom_host: `${upstream.url}/v1`, override_params: { model: 'error-500' } },
        { provider: 'openai', api_key: 'sk-b', custom_host: `${upstream.url}/v1` },
      ],
    };
    const traceId = 'a'.repeat(32);
    expect((await chat({ 'x-gateway-config': JSON.stringify(config), 'x-gateway-trace-id': traceId })).status).toBe(200);
    const clients = (await spansOf(traceId, 3)).filter((span) => span.kind === 3);
    expect(clients.map((span) => attribute(span, 'http.response.status_code').intValue).sort()).toEqual(['200', '500']);
    const failed = clients.find((span) => attribute(span, 'http.response.status_code').intValue === '500') as ExportedSpan & { status: { code: number } };
    expect(failed.status.code).toBe(2);
  });

  it('hashes a gateway trace id that is not 32 hex digits into one, the same every time', async () => {
    const { createHash } = await import('node:crypto');
    const expected = createHash('sha256').update('checkout-flow-7').digest('hex').slice(0, 32);
    await chat({ 'x-gateway-trace-id': 'checkout-flow-7' });
    expect(await spansOf(expected, 2)).toHaveLength(2);
  });

  it('writes an embedded-metric-format line per inference request', async () => {
    await chat({});
    const line = await pollUntil(
      async () =>
        gateway
          .output()
          .split('\n')
          .find((text) => text.includes('"CloudWatchMetrics"')),
      (found) => found !== undefined,
      5_000,
    );
    const metrics = JSON.parse(line!);
    expect(metrics).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', requests: 1, errors: 0 });
    expect(metrics._aws.CloudWatchMetrics[0].Dimensions).toEqual([['provider', 'model'], ['provider']]);
    expect(metrics.latency).toBeGreaterThan(0);
  });
});
