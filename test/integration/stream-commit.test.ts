import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { env, spawnSharedGateway } from '../support/gateway-client';
import type { SpawnedGateway } from '../support/spawn-gateway';
import { collectSse } from '../support/sse';

/** A gateway that commits a held stream after 200 ms instead of 10 s. */
let gateway: SpawnedGateway;
let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await spawnSharedGateway({ GATEWAY_STREAM_COMMIT_MS: '200' });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

const stream = (config: unknown) =>
  fetch(`${gateway.url}/chat/completions`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': env().adminKey, 'content-type': 'application/json', 'x-gateway-config': JSON.stringify(config) },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'slow start' }], stream: true }),
  });

describe('a streamed request whose providers are slow to start', () => {
  it('commits 200 with a keep-alive comment, then relays the stream of the target that answered', async () => {
    upstream.script('/commit/a', [{ status: 503, delayMs: 600 }]);
    const started = performance.now();
    const response = await stream({
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'openai', api_key: 'k', custom_host: `${upstream.url}/commit/a/v1` },
        { provider: 'openai', api_key: 'k', custom_host: `${upstream.url}/commit/b/v1` },
      ],
    });
    expect(response.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(550);
    const collected = await collectSse(response);
    expect(collected.text.startsWith(': waiting for the provider')).toBe(true);
    expect((collected.json[0] as any).choices[0].delta.role).toBe('assistant');
    expect(collected.doneLast).toBe(true);
  });

  it('ends with an error event and [DONE] when every target fails after the commit', async () => {
    upstream.script('/commit/fail', [{ status: 500, delayMs: 500, json: { error: { message: 'provider exploded' } } }]);
    const response = await stream({ provider: 'openai', api_key: 'k', custom_host: `${upstream.url}/commit/fail/v1` });
    expect(response.status).toBe(200);
    const collected = await collectSse(response);
    expect((collected.json.at(-1) as any).error).toMatchObject({ message: 'provider exploded', provider: 'openai' });
    expect(collected.doneLast).toBe(true);
  });

  it('ends with an error event and [DONE] when the provider answers with HTML after the commit', async () => {
    upstream.script('/commit/html', [{ status: 200, delayMs: 500, body: '<html>maintenance</html>', headers: { 'content-type': 'text/html' } }]);
    const response = await stream({ provider: 'openai', api_key: 'k', custom_host: `${upstream.url}/commit/html/v1` });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const collected = await collectSse(response);
    expect(collected.text).not.toContain('maintenance');
    expect((collected.json.at(-1) as any).error).toMatchObject({ code: 'provider_stream_content_type', provider: 'openai' });
    expect((collected.json.at(-1) as any).error.message).toContain('answered a stream request with text/html');
    expect(collected.doneLast).toBe(true);
  });
});
