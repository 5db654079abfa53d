import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { env, gatewayFetch, waitForLogs } from '../support/gateway-client';
import { collectSse } from '../support/sse';

describe('streamed unified routes', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
  });
  afterAll(() => upstream.close());

  const streamChat = (prefix: string, init: { signal?: AbortSignal; traceId?: string } = {}) =>
    gatewayFetch('/chat/completions', {
      method: 'POST',
      signal: init.signal,
      headers: {
        'content-type': 'application/json',
        'x-gateway-custom-host': `${upstream.url}${prefix}/v1`,
        authorization: 'Bearer sk',
        ...(init.traceId ? { 'x-gateway-trace-id': init.traceId } : {}),
      },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'stream' }], stream: true }),
    });

  const chunk = (content: string) => JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] });

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
