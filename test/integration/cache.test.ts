import { QueryCommand, UpdateItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoClient, resetClients } from '../../lib/store/clients';
import { ownPath, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { env, gatewayFetch, openaiClient, spawnSharedGateway, waitForLogs } from '../support/gateway-client';
import { connectToGatewayStore, stateTable } from '../support/gateway-store';
import { collectSse } from '../support/sse';

connectToGatewayStore();
beforeAll(() => {
  Object.assign(process.env, { GATEWAY_STATE_TABLE: stateTable, GATEWAY_S3_ENDPOINT: env().endpoints.s3 });
  resetClients();
});

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());

const host = (label: string) => ownPath(upstream, 'cache', label);

const cached = (h: { custom_host: string }, extra: Record<string, unknown> = {}) => ({
  provider: 'openai',
  api_key: 'sk-cache-test',
  custom_host: h.custom_host,
  cache: { mode: 'simple', max_age: 3600 },
  ...extra,
});

const json = { 'content-type': 'application/json' };

async function post(path: string, config: unknown, body: unknown, headers: Record<string, string> = {}) {
  const response = await gatewayFetch(path, {
    method: 'POST',
    headers: { ...json, 'x-gateway-config': JSON.stringify(config), ...headers },
    body: JSON.stringify(body),
  });
  return { response, status: response.headers.get('x-gateway-cache-status'), text: await response.text() };
}

const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });

describe('response cache', () => {
  it('answers the second identical chat completion from the cache, with the same body and no provider call', async () => {
    const h = host('chat');
    const client = openaiClient({ headers: { 'x-gateway-config': JSON.stringify(cached(h)) } });
    const first = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'cache me please' }] }).withResponse();
    const second = await client.chat.completions.create({ messages: [{ content: 'cache me please', role: 'user' }], model: 'gpt-4o-mini' }).withResponse();
    expect(first.response.headers.get('x-gateway-cache-status')).toBe('MISS');
    expect(second.response.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(second.data).toEqual(first.data);
    expect(h.calls()).toBe(1);
  });

  it('says DISABLED without a cache setting', async () => {
    const h = host('off');
    const { status } = await post('/chat/completions', { provider: 'openai', api_key: 'sk', custom_host: h.custom_host }, chat('no cache'));
    expect(status).toBe('DISABLED');
  });

  it('replays a cached answer as a stream: role first, content in several chunks, finish reason, usage only when asked, [DONE]', async () => {
    const h = host('replay');
    const body = chat('tell me a few words about the weather today');
    const first = await post('/chat/completions', cached(h), body);
    expect(first.status).toBe('MISS');
    const answer = JSON.parse(first.text);

    const streamed = await gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: { ...json, 'x-gateway-config': JSON.stringify(cached(h)) },
      body: JSON.stringify({ ...body, stream: true }),
    });
    expect(streamed.headers.get('x-gateway-cache-status')).toBe('HIT');
    const events = await collectSse(streamed);
    const chunks = events.json as any[];
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    const contentChunks = chunks.filter((chunk) => chunk.choices[0]?.delta?.content);
    expect(contentChunks.length).toBeGreaterThan(1);
    expect(contentChunks.map((chunk) => chunk.choices[0].delta.content).join('')).toBe(answer.choices[0].message.content);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
    expect(chunks.some((chunk) => chunk.usage)).toBe(false);
    expect(events.doneLast).toBe(true);

    const withUsage = await gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: { ...json, 'x-gateway-config': JSON.stringify(cached(h)) },
      body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
    });
    const usageChunks = ((await collectSse(withUsage)).json as any[]).filter((chunk) => chunk.usage);
    expect(usageChunks.map((chunk) => chunk.usage)).toEqual([answer.usage]);
    expect(h.calls()).toBe(1);
  });

  it('caches a complete streamed answer for later streamed and non-streamed requests, with its usage', async () => {
    const h = host('stream-first');
    const body = chat('stream this answer first', { stream: true });
    const live = await gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: { ...json, 'x-gateway-config': JSON.stringify(cached(h)) },
      body: JSON.stringify(body),
    });
    expect(live.headers.get('x-gateway-cache-status')).toBe('MISS');
    const liveText = ((await collectSse(live)).json as any[]).map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');

    let hit = await post('/chat/completions', cached(h), { ...body, stream: false });
    for (let tries = 0; hit.status !== 'HIT' && tries < 20; tries++) hit = await post('/chat/completions', cached(h), { ...body, stream: false });
    expect(hit.status).toBe('HIT');
    const answer = JSON.parse(hit.text);
    expect(answer.object).toBe('chat.completion');
    expect(answer.choices[0].message.content).toBe(liveText);
    expect(answer.usage.total_tokens).toBeGreaterThan(0);
    expect(h.calls()).toBe(1);
  });

  it('caches tool calls, text completions and embeddings', async () => {
    const h = host('kinds');
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const toolBody = chat('call a tool for Paris', { tools });
    const toolMiss = await post('/chat/completions', cached(h), toolBody);
    const toolHit = await post('/chat/completions', cached(h), toolBody);
    expect([toolMiss.status, toolHit.status]).toEqual(['MISS', 'HIT']);
    expect(JSON.parse(toolHit.text).choices[0].message.tool_calls[0].function.name).toBe('get_weather');
    expect(toolHit.text).toBe(toolMiss.text);

    const completion = { model: 'gpt-3.5-turbo-instruct', prompt: 'complete me' };
    expect((await post('/completions', cached(h), completion)).status).toBe('MISS');
    expect((await post('/completions', cached(h), completion)).status).toBe('HIT');
    const embedding = { model: 'text-embedding-3-small', input: 'embed me' };
    const embedMiss = await post('/embeddings', cached(h), embedding);
    const embedHit = await post('/embeddings', cached(h), embedding);
    expect([embedMiss.status, embedHit.status]).toEqual(['MISS', 'HIT']);
    expect(embedHit.text).toBe(embedMiss.text);
    expect(h.calls()).toBe(3);
  });

  it('partitions by namespace, and force refresh calls the provider and replaces the entry', async () => {
    const h = host('ns');
    const body = chat('namespaced question');
    const a = (ns: string, extra: Record<string, string> = {}) => post('/chat/completions', cached(h), body, { 'x-gateway-cache-namespace': ns, ...extra });
    expect((await a('team-a')).status).toBe('MISS');
    expect((await a('team-a')).status).toBe('HIT');
    expect((await a('team-b')).status).toBe('MISS');
    // A namespace ignores metadata.
    expect((await a('team-b', { 'x-gateway-metadata': '{"_user":"someone-else"}' })).status).toBe('HIT');
    expect((await a('team-a', { 'x-gateway-cache-force-refresh': 'true' })).status).toBe('REFRESH');
    expect((await a('team-a')).status).toBe('HIT');
    expect(h.calls()).toBe(3);
  });

  it('keeps callers with different metadata or provider keys apart when there is no namespace', async () => {
    const h = host('partition');
    const body = chat('whose answer is this');
    expect((await post('/chat/completions', cached(h), body, { 'x-gateway-metadata': '{"_user":"alice"}' })).status).toBe('MISS');
    expect((await post('/chat/completions', cached(h), body, { 'x-gateway-metadata': '{"_user":"alice"}' })).status).toBe('HIT');
    expect((await post('/chat/completions', cached(h), body, { 'x-gateway-metadata': '{"_user":"bob"}' })).status).toBe('MISS');
    expect((await post('/chat/completions', cached(h, { api_key: 'sk-another-key' }), body, { 'x-gateway-metadata': '{"_user":"alice"}' })).status).toBe(
      'MISS',
    );
    // Delivery fields do not split the cache.
    expect((await post('/chat/completions', cached(h), { ...body, user: 'end-user-7' }, { 'x-gateway-metadata': '{"_user":"alice"}' })).status).toBe('HIT');
  });

  it('keeps answers shaped differently apart: forwarded headers and strict_api_compliance', async () => {
    const h = host('shaping');
    const body = chat('shape my answer');
    const forwarding = cached(h, { forward_headers: ['x-beta-features'] });
    expect((await post('/chat/completions', forwarding, body, { 'x-beta-features': 'one' })).status).toBe('MISS');
    expect((await post('/chat/completions', forwarding, body, { 'x-beta-features': 'one' })).status).toBe('HIT');
    expect((await post('/chat/completions', forwarding, body, { 'x-beta-features': 'two' })).status).toBe('MISS');
    // A header the target does not forward never reaches the provider, so it splits nothing.
    expect((await post('/chat/completions', cached(h), body, { 'x-beta-features': 'one' })).status).toBe('MISS');
    expect((await post('/chat/completions', cached(h), body, { 'x-beta-features': 'two' })).status).toBe('HIT');
    // Without strict compliance an answer may carry content_blocks, which a strict client must never get.
    expect((await post('/chat/completions', cached(h, { strict_api_compliance: false }), body)).status).toBe('MISS');
    expect((await post('/chat/completions', cached(h, { strict_api_compliance: false }), body)).status).toBe('HIT');
    expect(h.calls()).toBe(4);
  });

  it('never caches an error or a stream that broke off', async () => {
    const h = host('errors');
    upstream.script(h.prefix, [{ status: 500, json: { error: { message: 'boom', type: 'server_error' } } }]);
    const body = chat('fail first');
    expect((await post('/chat/completions', cached(h), body)).response.status).toBe(500);
    expect((await post('/chat/completions', cached(h), body)).status).toBe('MISS');

    const b = host('broken');
    const chunk = (text: string) =>
      JSON.stringify({
        id: 'c1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'gpt-4o-mini',
        choices: [{ index: 0, delta: { content: text }, finish_reason: null }],
      });
    upstream.script(b.prefix, [{ sse: [chunk('a'), chunk('b'), chunk('c')], failAfter: 2 }]);
    const streamBody = chat('break my stream', { stream: true });
    const broken = await gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: { ...json, 'x-gateway-config': JSON.stringify(cached(b)) },
      body: JSON.stringify(streamBody),
    });
    await collectSse(broken);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = await post('/chat/completions', cached(b), { ...streamBody, stream: false });
    expect(after.status).toBe('MISS');
  });

  it('logs the cache status, and a hit’s tokens as saved rather than spent', async () => {
    const h = host('logs');
    const body = chat('log my cache use');
    const traceId = `cache-log-${Date.now()}`;
    await post('/chat/completions', cached(h), body, { 'x-gateway-trace-id': traceId });
    await post('/chat/completions', cached(h), body, { 'x-gateway-trace-id': traceId });
    const records = await waitForLogs(traceId, { count: 2 });
    const byStatus = Object.fromEntries(records.map((record: any) => [record.cache_status, record]));
    expect(byStatus.MISS.usage.total_tokens).toBeGreaterThan(0);
    expect(byStatus.HIT.usage).toBeUndefined();
    expect(byStatus.HIT.saved_usage).toEqual(byStatus.MISS.usage);
  });

  it('refuses bad cache headers with a 400 naming the header', async () => {
    const h = host('headers');
    const refresh = await post('/chat/completions', cached(h), chat('x'), { 'x-gateway-cache-force-refresh': 'yes' });
    expect(refresh.response.status).toBe(400);
    expect(JSON.parse(refresh.text).error.param).toBe('x-gateway-cache-force-refresh');
    const namespace = await post('/chat/completions', cached(h), chat('x'), { 'x-gateway-cache-namespace': 'n'.repeat(300) });
    expect(JSON.parse(namespace.text).error.param).toBe('x-gateway-cache-namespace');
  });

  it('never shares an entry between workspaces, shares it between gateway processes, and never serves an expired one', async () => {
    const h = host('shared');
    const workspace = await ownerPost('/workspaces', { name: `Cache ${Date.now()} ${Math.random().toString(36).slice(2, 8)}` });
    const key = (await ownerPost('/api-keys', { name: 'cache test', role: 'admin', workspace_id: workspace.id })).key as string;
    const body = chat('answer per workspace');
    const asOther = (extra: Record<string, string> = {}, url?: string) =>
      postTo(url, '/chat/completions', cached(h), body, { 'x-gateway-api-key': key, ...extra });

    expect((await post('/chat/completions', cached(h), body)).status).toBe('MISS');
    expect((await asOther()).status).toBe('MISS');
    expect((await asOther()).status).toBe('HIT');

    const second = await spawnSharedGateway();
    try {
      // Another process, with an empty first level, reads what this one stored.
      expect((await asOther({}, second.url)).status).toBe('HIT');
      const fresh = chat('stored, then aged');
      expect((await postTo(undefined, '/chat/completions', cached(h), fresh, { 'x-gateway-api-key': key })).status).toBe('MISS');
      await ageEntries(workspace.id, 2);
      expect((await postTo(second.url, '/chat/completions', cached(h), fresh, { 'x-gateway-api-key': key })).status).toBe('MISS');
    } finally {
      await second.stop();
    }
  });

  it('keeps an answer above 350 KB in S3, where another gateway process reads it', async () => {
    const h = host('large');
    const workspace = await ownerPost('/workspaces', { name: `Cache ${Date.now()} ${Math.random().toString(36).slice(2, 8)}` });
    const key = (await ownerPost('/api-keys', { name: 'cache test', role: 'admin', workspace_id: workspace.id })).key as string;
    // The fake provider echoes the prompt, so the answer is as large, multi-byte characters included.
    const body = chat(`ünïcødé ${randomBytes(150_000).toString('base64')} ✓`.repeat(2));
    const first = await postTo(undefined, '/chat/completions', cached(h), body, { 'x-gateway-api-key': key });
    expect(first.status).toBe('MISS');
    expect(Buffer.byteLength(first.text)).toBeGreaterThan(350 * 1024);
    const [item] = await storedEntries(workspace.id, 1);
    expect(item!.bodyObject?.S).toMatch(new RegExp(`^cache/${workspace.id}/`));

    const second = await spawnSharedGateway();
    try {
      // An empty first level: the body comes from S3.
      const hit = await postTo(second.url, '/chat/completions', cached(h), body, { 'x-gateway-api-key': key });
      expect(hit.status).toBe('HIT');
      expect(hit.text).toBe(first.text);
    } finally {
      await second.stop();
    }
    expect(h.calls()).toBe(1);
  });
});

async function ownerPost(path: string, body: unknown): Promise<any> {
  const response = await gatewayFetch(path, { method: 'POST', headers: json, body: JSON.stringify(body) });
  expect(response.status).toBe(200);
  return response.json();
}

async function postTo(url: string | undefined, path: string, config: unknown, body: unknown, headers: Record<string, string>) {
  const init = { method: 'POST', headers: { ...json, 'x-gateway-config': JSON.stringify(config), ...headers }, body: JSON.stringify(body) };
  const response = url ? await fetch(`${url}${path}`, init) : await gatewayFetch(path, init);
  return { response, status: response.headers.get('x-gateway-cache-status'), text: await response.text() };
}

/** The workspace's stored cache items, once the `count` it should hold have been written (writes land after the answer). */
async function storedEntries(workspaceId: string, count: number): Promise<Record<string, AttributeValue>[]> {
  const query = () =>
    dynamoClient().send(
      new QueryCommand({
        TableName: stateTable,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': `CACHE#${workspaceId}` }),
        ConsistentRead: true,
      }),
    );
  let found = await query();
  for (let tries = 0; (found.Items?.length ?? 0) < count && tries < 100; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    found = await query();
  }
  expect(found.Items?.length).toBe(count);
  return found.Items ?? [];
}

/** Makes every cached answer of the workspace expired, by its stored expiry (never by waiting for it). */
async function ageEntries(workspaceId: string, count: number): Promise<void> {
  for (const item of await storedEntries(workspaceId, count)) {
    const { pk, sk } = unmarshall(item);
    await dynamoClient().send(
      new UpdateItemCommand({
        TableName: stateTable,
        Key: marshall({ pk, sk }),
        UpdateExpression: 'SET expiresAtMs = :past',
        ExpressionAttributeValues: marshall({ ':past': Date.now() - 1000 }),
      }),
    );
  }
}
