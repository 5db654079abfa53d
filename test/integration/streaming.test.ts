import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../support/fakes/anthropic';
import { startFakeBedrock, type FakeBedrock } from '../support/fakes/bedrock';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { env, gatewayFetch, waitForLogs } from '../support/gateway-client';
import { eventually } from '../support/poll';
import { collectSse } from '../support/sse';

describe('streamed unified routes', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
  });
  afterAll(() => upstream.close());

  const streamChat = (prefix: string, init: { signal?: AbortSignal; traceId?: string; headers?: Record<string, string> } = {}) =>
    gatewayFetch('/chat/completions', {
      method: 'POST',
      signal: init.signal,
      headers: {
        'content-type': 'application/json',
        'x-gateway-custom-host': `${upstream.url}${prefix}/v1`,
        authorization: 'Bearer sk',
        ...(init.traceId ? { 'x-gateway-trace-id': init.traceId } : {}),
        ...init.headers,
      },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'stream' }], stream: true }),
    });

  const chunk = (content: string) =>
    JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] });

  it('sends each event as the provider produces it, not when the stream ends', async () => {
    upstream.script('/slow', [{ sse: [chunk('a'), chunk('b'), chunk('c'), '[DONE]'], chunkDelayMs: 200 }]);
    const collected = await collectSse(await streamChat('/slow'));
    const times = collected.events.map((event) => event.receivedAt);
    expect(collected.events.map((event) => event.data).at(-1)).toBe('[DONE]');
    expect(times.at(-1)! - times[0]).toBeGreaterThan(450);
  });

  it('turns a provider stream that breaks off into an error event followed by [DONE]', async () => {
    const traceId = `broken-${Date.now()}`;
    upstream.script('/broken', [{ sse: [chunk('a'), chunk('b'), chunk('c'), chunk('d')], failAfter: 2 }]);
    const collected = await collectSse(await streamChat('/broken', { traceId }));
    expect(collected.status).toBe(200);
    const payloads = collected.json as any[];
    expect(payloads[0].choices[0].delta.content).toBe('a');
    const error = payloads.at(-1);
    expect(error.error).toMatchObject({ code: 'provider_stream_error', provider: 'openai' });
    expect(collected.doneLast).toBe(true);
    const [log] = await waitForLogs(traceId);
    expect(log.error.code).toBe('provider_stream_error');
  });

  it('stops the provider call when the client goes away', async () => {
    let upstreamClosed = false;
    let sent = 0;
    upstream.script('/abandoned', [
      {
        handle: (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          const timer = setInterval(() => res.write(`data: ${chunk(String(sent++))}\n\n`), 50);
          res.on('close', () => {
            clearInterval(timer);
            upstreamClosed = true;
          });
        },
      },
    ]);
    const controller = new AbortController();
    const response = await streamChat('/abandoned', { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.cancel().catch(() => undefined);
    const deadline = Date.now() + 3_000;
    while (!upstreamClosed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(upstreamClosed).toBe(true);
    expect(sent).toBeLessThan(60);
  });

  /** A provider that sends its first events, then nothing (and never ends), until its connection goes. */
  const stallAfterFirstEvents = (state: { upstreamClosed: boolean }) => ({
    handle: (_req: unknown, res: import('node:http').ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${chunk('a')}\n\n`);
      res.write(`data: ${chunk('b')}\n\n`);
      res.on('close', () => (state.upstreamClosed = true));
    },
  });

  it('ends a stream that stalls after its first chunks: timeout error event, [DONE], provider call aborted, logged', async () => {
    const traceId = `stalled-${Date.now()}`;
    const state = { upstreamClosed: false };
    upstream.script('/stalled', [stallAfterFirstEvents(state)]);
    const startedAt = Date.now();
    const collected = await collectSse(await streamChat('/stalled', { traceId, headers: { 'x-gateway-request-timeout': '700' } }));
    const elapsed = Date.now() - startedAt;
    expect(collected.status).toBe(200);
    const payloads = collected.json as any[];
    expect(payloads.slice(0, 2).map((payload) => payload.choices[0].delta.content)).toEqual(['a', 'b']);
    expect(payloads.at(-1).error).toMatchObject({ type: 'timeout_error', code: 'timeout_error', provider: 'openai' });
    expect(collected.doneLast).toBe(true);
    expect(elapsed).toBeLessThan(10_000);
    expect(await eventually(() => state.upstreamClosed)).toBe(true);
    const [log] = await waitForLogs(traceId);
    expect(log.error.code).toBe('timeout_error');
  });

  it('ends a stalled pass-through answer and logs the timeout', async () => {
    const traceId = `stalled-pt-${Date.now()}`;
    const state = { upstreamClosed: false };
    upstream.script('/stalled-pt', [stallAfterFirstEvents(state)]);
    const response = await gatewayFetch('/stream-anything', {
      headers: { 'x-gateway-custom-host': `${upstream.url}/stalled-pt/v1`, 'x-gateway-request-timeout': '700', 'x-gateway-trace-id': traceId },
    });
    expect(response.status).toBe(200);
    // The relayed bytes stop where the provider stopped; the body then ends (cut off) instead of hanging.
    const text = await response.text().catch(() => 'cut off');
    expect(text === 'cut off' || text.includes(chunk('b'))).toBe(true);
    expect(await eventually(() => state.upstreamClosed)).toBe(true);
    const [log] = await waitForLogs(traceId);
    expect(log.error.code).toBe('timeout_error');
  });

  it('survives clients that leave before the answer has started', async () => {
    upstream.script('/left-early', [{ hangMs: 800 }, { hangMs: 800 }, { hangMs: 800 }]);
    for (let i = 0; i < 3; i++) {
      const controller = new AbortController();
      const pending = streamChat('/left-early', { signal: controller.signal }).catch(() => undefined);
      setTimeout(() => controller.abort(), 100);
      await pending;
    }
    await new Promise((resolve) => setTimeout(resolve, 900));
    const response = await gatewayFetch('/models', { headers: { 'x-gateway-provider': 'openai' } });
    expect(response.status).toBe(200);
    await response.text();
  });

  it('keeps a stream open through long pauses between events', async () => {
    upstream.script('/pauses', [{ sse: [chunk('x'), chunk('y'), '[DONE]'], chunkDelayMs: 1_200 }]);
    const collected = await collectSse(await streamChat('/pauses'));
    expect(collected.doneLast).toBe(true);
  });

  it('works with the gateway URL given as localhost', async () => {
    const url = env().gatewayUrl.replace('127.0.0.1', 'localhost');
    const response = await fetch(`${url}/models`, { headers: { 'x-gateway-api-key': env().adminKey, 'x-gateway-provider': 'openai' } });
    expect(response.status).toBe(200);
    await response.text();
  });
});

describe('provider bodies the unified routes read whole', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
  });
  afterAll(() => upstream.close());

  const chat = (prefix: string, headers: Record<string, string> = {}) =>
    gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-custom-host': `${upstream.url}${prefix}/v1`, authorization: 'Bearer sk', ...headers },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    });

  /** A provider that sends a status and its headers and the start of a body, then nothing. */
  const headThenStall = (state: { closed: boolean }, status: number) => ({
    handle: (_req: unknown, res: ServerResponse) => {
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': '200' });
      res.write('{"');
      res.on('close', () => (state.closed = true));
    },
  });

  it.each([503, 200])('ends a %s body that stalls with the timeout error and aborts the provider call', async (status) => {
    const traceId = `held-stall-${status}-${Date.now()}`;
    const state = { closed: false };
    upstream.script(`/held-stall-${status}`, [headThenStall(state, status)]);
    const started = Date.now();
    const response = await chat(`/held-stall-${status}`, { 'x-gateway-request-timeout': '700', 'x-gateway-trace-id': traceId });
    expect(response.status).toBe(408);
    expect((await response.json()).error).toMatchObject({ type: 'timeout_error', code: 'timeout_error', provider: 'openai' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await eventually(() => state.closed)).toBe(true);
    const [log] = await waitForLogs(traceId);
    expect(log.error.code).toBe('timeout_error');
  });

  it.each([500, 200])('answers 502 provider_connection_broken when the connection breaks in the middle of a %s body', async (status) => {
    upstream.script(`/held-cut-${status}`, [
      {
        handle: (_req, res) => {
          res.writeHead(status, { 'content-type': 'application/json', 'content-length': '100' });
          res.write('{"error":{"mess');
          setTimeout(() => res.socket?.destroy(), 30);
        },
      },
    ]);
    const response = await chat(`/held-cut-${status}`);
    expect(response.status).toBe(502);
    const { error } = await response.json();
    expect(error).toMatchObject({ type: 'provider_error', code: 'provider_connection_broken', provider: 'openai' });
    expect(error.message).toMatch(/connection to openai broke/);
  });
});

describe('a streamed request answered with something other than a stream', () => {
  let upstream: FakeUpstream;
  let anthropic: FakeAnthropic;
  let bedrock: FakeBedrock;
  const bedrockCredentials = { accessKeyId: 'AKIDFAKEBEDROCK00002', secretAccessKey: 'fake/Secret/for/the/content/type/test', region: 'eu-west-1' };
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    anthropic = await startFakeAnthropic();
    bedrock = await startFakeBedrock(bedrockCredentials);
  });
  afterAll(async () => {
    await upstream.close();
    await anthropic.close();
    await bedrock.close();
  });

  const streamChat = (headers: Record<string, string>, model = 'm') =>
    gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk', ...headers },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'stream' }], stream: true }),
    });

  it.each([
    ['text/html; charset=utf-8', '<html><body>Welcome to nginx!</body></html>'],
    ['application/json', '{"id":"c1","object":"chat.completion","choices":[]}'],
    ['application/octet-stream', Buffer.from([0, 1, 2, 250, 251])],
  ])('refuses a 200 of type %s with a 502 naming the type, before anything is committed', async (type, body) => {
    const traceId = `not-sse-${type.split(/[/;]/)[1]}-${Date.now()}`;
    upstream.script('/not-sse', [{ status: 200, body, headers: { 'content-type': type } }]);
    const response = await streamChat({ 'x-gateway-custom-host': `${upstream.url}/not-sse/v1`, 'x-gateway-trace-id': traceId });
    expect(response.status).toBe(502);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const { error } = await response.json();
    expect(error).toMatchObject({ type: 'provider_error', code: 'provider_stream_content_type', provider: 'openai' });
    expect(error.message).toContain(`answered a stream request with ${type}`);
    const [log] = await waitForLogs(traceId);
    expect(log.error.code).toBe('provider_stream_content_type');
  });

  it('refuses a 200 without a content type', async () => {
    upstream.script('/untyped', [{ handle: (_req, res) => void res.writeHead(200, { 'content-length': '2' }).end('{}') }]);
    const response = await streamChat({ 'x-gateway-custom-host': `${upstream.url}/untyped/v1` });
    expect(response.status).toBe(502);
    const { error } = await response.json();
    expect(error.code).toBe('provider_stream_content_type');
    expect(error.message).toContain('without a content type');
  });

  it('falls back from a target that answered the stream request with HTML', async () => {
    upstream.script('/html-first', [{ status: 200, body: '<html></html>', headers: { 'content-type': 'text/html' } }]);
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'openai', api_key: 'k', custom_host: `${upstream.url}/html-first/v1` },
        { provider: 'openai', api_key: 'k', custom_host: `${upstream.url}/sse-second/v1` },
      ],
    };
    const response = await streamChat({ 'x-gateway-config': JSON.stringify(config) });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
    const collected = await collectSse(response);
    expect((collected.json[0] as any).choices[0].delta.role).toBe('assistant');
    expect(collected.doneLast).toBe(true);
  });

  it('refuses a JSON 200 from a native provider (anthropic) the same way', async () => {
    anthropic.script({ status: 200, json: { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'not streamed' }] } });
    const response = await streamChat(
      { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': anthropic.url, authorization: 'Bearer sk-ant' },
      'claude-sonnet-4-20250514',
    );
    expect(response.status).toBe(502);
    const { error } = await response.json();
    expect(error).toMatchObject({ code: 'provider_stream_content_type', provider: 'anthropic' });
    expect(error.message).toContain('answered a stream request with application/json');
  });

  it('expects Bedrock’s binary event stream, and refuses a JSON 200 from it', async () => {
    const headers = {
      'x-gateway-provider': 'bedrock',
      'x-gateway-custom-host': bedrock.url,
      'x-gateway-cloudA-access-key-id': bedrockCredentials.accessKeyId,
      'x-gateway-cloudA-secret-access-key': bedrockCredentials.secretAccessKey,
      'x-gateway-cloudA-region': bedrockCredentials.region,
    };
    const model = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
    const streamed = await collectSse(await streamChat(headers, model));
    expect(streamed.status).toBe(200);
    expect(streamed.doneLast).toBe(true);

    bedrock.script({ json: { output: { message: { role: 'assistant', content: [{ text: 'not streamed' }] } }, stopReason: 'end_turn' } });
    const response = await streamChat(headers, model);
    expect(response.status).toBe(502);
    const { error } = await response.json();
    expect(error).toMatchObject({ code: 'provider_stream_content_type', provider: 'bedrock' });
    expect(error.message).toContain('application/vnd.amazon.eventstream');
  });
});
