import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { gatewayFetch, openaiClient } from '../support/gateway-client';
import { collectSse } from '../support/sse';

let upstream: FakeUpstream;
let counter = 0;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());

/** A fresh base path on the fake upstream for one target, so a test controls exactly what it answers. */
function host(label: string): { prefix: string; custom_host: string } {
  const prefix = `/t/${label}-${++counter}`;
  return { prefix, custom_host: `${upstream.url}${prefix}/v1` };
}

const target = (h: { custom_host: string }, extra: Record<string, unknown> = {}) => ({
  provider: 'openai',
  api_key: 'sk-target',
  custom_host: h.custom_host,
  ...extra,
});
const requestsTo = (prefix: string) => upstream.requests.filter((request) => request.path.startsWith(prefix));
const chatBody = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'route me' }], ...extra });

function chat(config: unknown, extraHeaders: Record<string, string> = {}, body = chatBody()) {
  return gatewayFetch('/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-config': typeof config === 'string' ? config : JSON.stringify(config), ...extraHeaders },
    body,
  });
}

describe('fallback', () => {
  it('is invisible to the openai client, streamed or not', async () => {
    const a = host('fb-a');
    const b = host('fb-b');
    upstream.script(a.prefix, [{ status: 503, json: { error: { message: 'down', type: 'server_error' } } }, { reset: true }]);
    const config = { strategy: { mode: 'fallback' }, targets: [target(a), target(b)] };
    const client = openaiClient({ headers: { 'x-gateway-config': JSON.stringify(config) } });
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello fallback' }] })
      .withResponse();
    expect(data.choices[0].message.content).toContain('hello fallback');
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
    expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('0');
    expect(response.headers.get('x-gateway-cache-status')).toBe('DISABLED');

    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'stream fallback' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toContain('stream fallback');
    expect(requestsTo(a.prefix)).toHaveLength(2);
    expect(requestsTo(b.prefix)).toHaveLength(2);
  });

  it('falls back when a stream breaks before its first chunk', async () => {
    const a = host('fb-stream-a');
    const b = host('fb-stream-b');
    upstream.script(a.prefix, [{ sse: ['{"never":"sent"}'], failAfter: 0 }]);
    const collected = await collectSse(await chat({ strategy: { mode: 'fallback' }, targets: [target(a), target(b)] }, {}, chatBody({ stream: true })));
    expect(collected.status).toBe(200);
    expect(collected.doneLast).toBe(true);
    expect(requestsTo(b.prefix)).toHaveLength(1);
  });

  it('returns the last failure as it came when every target fails, with the provider status', async () => {
    const a = host('fb-all-a');
    const b = host('fb-all-b');
    upstream.script(a.prefix, [{ status: 500, json: { error: { message: 'a broke' } } }]);
    upstream.script(b.prefix, [{ status: 429, json: { error: { message: 'b is busy', type: 'rate_limit_error' } } }]);
    const response = await chat({ strategy: { mode: 'fallback' }, targets: [target(a), target(b)] });
    expect(response.status).toBe(429);
    const body = await response.json();
    expect(body.error).toMatchObject({ message: 'b is busy', provider: 'openai' });
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
  });

  it('only falls back on strategy.on_status_codes when they are given', async () => {
    const a = host('fb-codes-a');
    const b = host('fb-codes-b');
    upstream.script(a.prefix, [{ status: 400, json: { error: { message: 'bad' } } }]);
    const response = await chat({ strategy: { mode: 'fallback', on_status_codes: [429, 503] }, targets: [target(a), target(b)] });
    expect(response.status).toBe(400);
    expect(requestsTo(b.prefix)).toHaveLength(0);
  });
});

describe('retry', () => {
  it('retries with backoff and reports the retry count', async () => {
    const a = host('retry');
    upstream.script(a.prefix, [{ status: 502 }, { status: 503 }]);
    const response = await chat({ ...target(a), retry: { attempts: 3 } });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('2');
    expect(requestsTo(a.prefix)).toHaveLength(3);
    await response.text();
  });

  it('waits as long as Retry-After says when asked to', async () => {
    const a = host('retry-after');
    upstream.script(a.prefix, [{ status: 429, headers: { 'retry-after-ms': '600' }, json: { error: { message: 'slow down' } } }]);
    const started = Date.now();
    const response = await chat({ ...target(a), retry: { attempts: 1, use_retry_after_headers: true } });
    expect(response.status).toBe(200);
    const [first, second] = requestsTo(a.prefix);
    expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(590);
    expect(Date.now() - started).toBeLessThan(5_000);
    await response.text();
  });

  it('gives up instead of waiting past the 60 s Retry-After cap', async () => {
    const a = host('retry-cap');
    upstream.script(a.prefix, [{ status: 429, headers: { 'retry-after': '120' }, json: { error: { message: 'come back later' } } }]);
    const started = Date.now();
    const response = await chat({ ...target(a), retry: { attempts: 2, use_retry_after_headers: true } });
    expect(response.status).toBe(429);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(response.headers.get('retry-after')).toBe('120');
  });
});

describe('timeouts', () => {
  it('answers 408 when the provider is slower than request_timeout, and aborts the call', async () => {
    const a = host('timeout');
    upstream.script(a.prefix, [{ hangMs: 3_000 }]);
    const started = Date.now();
    const response = await chat({ ...target(a), request_timeout: 300 });
    expect(response.status).toBe(408);
    expect((await response.json()).error).toMatchObject({ type: 'timeout_error', code: 'timeout_error' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('lets x-gateway-request-timeout win over the config, and falls back after a timeout', async () => {
    const a = host('timeout-a');
    const b = host('timeout-b');
    upstream.script(a.prefix, [{ status: 200, json: { late: true }, delayMs: 1_500 }]);
    const response = await chat(
      { strategy: { mode: 'fallback' }, request_timeout: 60_000, targets: [target(a), target(b)] },
      { 'x-gateway-request-timeout': '200' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
    await response.text();
  });

  it("refuses a request timeout past the inference functions' own 900 s, in the header and in a config, before any provider call", async () => {
    const a = host('timeout-range');
    for (const value of ['2147483648', '900001', '1e6', '-5']) {
      const response = await chat(target(a), { 'x-gateway-request-timeout': value });
      expect(response.status).toBe(400);
      const { error } = await response.json();
      expect(error).toMatchObject({ param: 'x-gateway-request-timeout', code: 'invalid_header' });
      expect(error.message).toContain('from 1 to 900000');
    }
    for (const requestTimeout of [2 ** 31, 900_001]) {
      const response = await chat({ ...target(a), request_timeout: requestTimeout });
      expect(response.status).toBe(400);
      expect((await response.json()).error.param).toBe('config.request_timeout');
      const saved = await gatewayFetch('/configs', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'too long', config: { ...target(a), request_timeout: requestTimeout } }),
      });
      expect(saved.status).toBe(400);
      expect(JSON.stringify(await saved.json())).toContain('config.request_timeout');
    }
    // The limit itself is accepted and waits: a provider that answers in time answers.
    const atLimit = await chat(target(a), { 'x-gateway-request-timeout': '900000' });
    expect(atLimit.status).toBe(200);
    await atLimit.text();
    expect(requestsTo(a.prefix)).toHaveLength(1);
  });
});

describe('loadbalance and conditional', () => {
  it('spreads requests by weight', async () => {
    const a = host('lb-a');
    const b = host('lb-b');
    const config = { strategy: { mode: 'loadbalance' }, targets: [target(a, { weight: 1 }), target(b, { weight: 3 })] };
    const runs = 200;
    await Promise.all(Array.from({ length: runs }, async () => (await chat(config)).text()));
    const share = requestsTo(b.prefix).length / runs;
    // Binomial(200, 0.75): the standard deviation is about 0.03; allow more than four of them.
    expect(share).toBeGreaterThan(0.62);
    expect(share).toBeLessThan(0.88);
    expect(requestsTo(a.prefix).length + requestsTo(b.prefix).length).toBe(runs);
  });

  it('routes on metadata and on params, else to the default', async () => {
    const pro = host('cond-pro');
    const long = host('cond-long');
    const basic = host('cond-basic');
    const config = {
      strategy: {
        mode: 'conditional',
        conditions: [
          { query: { 'metadata.tier': 'pro' }, then: 'pro' },
          { query: { 'params.max_tokens': { $gte: 1000 } }, then: 'long' },
        ],
        default: 'basic',
      },
      targets: [target(pro, { name: 'pro' }), target(long, { name: 'long' }), target(basic, { name: 'basic' })],
    };
    await (await chat(config, { 'x-gateway-metadata': JSON.stringify({ tier: 'pro' }) })).text();
    await (await chat(config, {}, chatBody({ max_tokens: 2000 }))).text();
    await (await chat(config)).text();
    expect([requestsTo(pro.prefix).length, requestsTo(long.prefix).length, requestsTo(basic.prefix).length]).toEqual([1, 1, 1]);
  });

  it('matches $regex in linear time, so a catastrophic pattern cannot freeze the gateway', async () => {
    const slow = host('regex-slow');
    const basic = host('regex-basic');
    const config = {
      strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.user': { $regex: '^(x+x+)+y$' } }, then: 'slow' }], default: 'basic' },
      targets: [target(slow, { name: 'slow' }), target(basic, { name: 'basic' })],
    };
    // A backtracking engine needs about 2^60 steps for this value; every other request would wait behind it.
    const response = await chat(config, { 'x-gateway-metadata': JSON.stringify({ user: `${'x'.repeat(60)}!` }) });
    expect(response.status).toBe(200);
    await response.text();
    expect([requestsTo(slow.prefix).length, requestsTo(basic.prefix).length]).toEqual([0, 1]);
  });
});

describe('request shaping', () => {
  it('applies override_params down the tree and forwards the named headers', async () => {
    const a = host('override');
    const config = {
      override_params: { temperature: 0.1, max_tokens: 7 },
      forward_headers: ['x-team'],
      targets: [target(a, { override_params: { model: 'gpt-4.1' } })],
      strategy: { mode: 'single' },
    };
    const response = await chat(config, { 'x-team': 'search', 'x-other': 'not forwarded', 'x-gateway-forward-headers': 'x-extra', 'x-extra': 'yes' });
    expect(response.status).toBe(200);
    await response.text();
    const [sent] = requestsTo(a.prefix);
    expect(sent.json).toMatchObject({ model: 'gpt-4.1', temperature: 0.1, max_tokens: 7, messages: [{ role: 'user', content: 'route me' }] });
    expect(sent.headers['x-team']).toBe('search');
    expect(sent.headers['x-extra']).toBe('yes');
    expect(sent.headers['x-other']).toBeUndefined();
    expect(sent.headers.authorization).toBe('Bearer sk-target');
  });

  it('uses the Authorization header as the key of a config target that has none', async () => {
    const a = host('header-key');
    const response = await chat({ provider: 'openai', custom_host: a.custom_host }, { authorization: 'Bearer sk-from-header' });
    expect(response.status).toBe(200);
    await response.text();
    expect(requestsTo(a.prefix)[0].headers.authorization).toBe('Bearer sk-from-header');
  });

  it('applies a config to pass-through requests too', async () => {
    const a = host('pt-a');
    const b = host('pt-b');
    upstream.script(a.prefix, [{ status: 503, body: 'down' }]);
    const response = await gatewayFetch('/models', {
      headers: { 'x-gateway-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets: [target(a), target(b)] }) },
    });
    expect(response.status).toBe(200);
    expect((await response.json()).object).toBe('list');
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
  });
});

describe('config errors', () => {
  it('answers 400 AB01 naming the path of every violation', async () => {
    const response = await chat({ strategy: { mode: 'fallback' }, retry: { attempts: 9 }, targets: [{ provider: 'openai', api_key: 'k', weight: -1 }] });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error.code).toMatch(/^AB01/);
    expect(body.error.message).toContain('config.retry.attempts');
    expect(body.error.message).toContain('config.targets[0].weight');
  });

  it('answers 400 AB01 for a target without credentials after header credentials are merged', async () => {
    const response = await chat({ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai' }] });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error).toMatchObject({ code: 'AB01', param: 'config.targets[0]' });
  });

  it('answers 400 for malformed config JSON and for an unknown saved config', async () => {
    const malformed = await chat('{"strategy":');
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error.param).toBe('x-gateway-config');
    const unknown = await chat('cfg_doesnotexist');
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).error.code).toBe('config_not_found');
  });

  it('answers 400 AB01 for a conditional query the router could not run', async () => {
    const conditional = (query: unknown) => ({
      strategy: { mode: 'conditional', conditions: [{ query, then: 'a' }], default: 'a' },
      targets: [{ ...target(host('query')), name: 'a' }],
    });
    for (const [query, param] of [
      [{ $and: 5 }, 'config.strategy.conditions[0].query.$and'],
      [{ $or: [null] }, 'config.strategy.conditions[0].query.$or[0]'],
      [{ 'params.model': { $regex: '(?=lookahead)' } }, 'config.strategy.conditions[0].query["params.model"].$regex'],
    ] as const) {
      const response = await chat(conditional(query));
      expect(response.status).toBe(400);
      const body = await response.json();
      expect(body.error).toMatchObject({ code: 'AB01', param });
    }
  });
});

describe('catalog providers and saved configs in requests', () => {
  const json = { 'content-type': 'application/json' };
  async function createIntegration(slug: string, h: { custom_host: string }, apiKey: string) {
    const response = await gatewayFetch('/providers', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ slug, provider: 'openai', name: slug, api_key: apiKey, custom_host: h.custom_host }),
    });
    expect(response.status).toBe(200);
    await response.text();
  }

  it('uses a catalog integration named by @slug, by virtual key, and from a config', async () => {
    const h = host('catalog');
    const slug = `cat-${counter}`;
    await createIntegration(slug, h, 'sk-stored-in-catalog-0123456789');
    const send = (headers: Record<string, string>) => gatewayFetch('/chat/completions', { method: 'POST', headers: { ...json, ...headers }, body: chatBody() });
    const variants: Record<string, string>[] = [
      { 'x-gateway-provider': `@${slug}` },
      { 'x-gateway-virtual-key': slug },
      { 'x-gateway-config': JSON.stringify({ provider: `@${slug}`, override_params: { model: 'gpt-4.1' } }) },
      { 'x-gateway-config': JSON.stringify({ virtual_key: slug }) },
    ];
    for (const headers of variants) {
      const response = await send(headers);
      expect(response.status, JSON.stringify(headers)).toBe(200);
      await response.text();
    }
    const sent = requestsTo(h.prefix);
    expect(sent).toHaveLength(4);
    for (const request of sent) expect(request.headers.authorization).toBe('Bearer sk-stored-in-catalog-0123456789');
    expect((sent[2].json as any).model).toBe('gpt-4.1');

    const unknown = await send({ 'x-gateway-provider': '@no-such-slug' });
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).error.message).toMatch(/no-such-slug/);
  });

  it('routes by a saved config, latest or a pinned version', async () => {
    const first = host('saved-v1');
    const second = host('saved-v2');
    const created = await gatewayFetch('/configs', { method: 'POST', headers: json, body: JSON.stringify({ name: 'routing', config: target(first) }) });
    expect(created.status).toBe(200);
    const { id } = await created.json();
    const updated = await gatewayFetch(`/configs/${id}`, { method: 'PUT', headers: json, body: JSON.stringify({ config: target(second) }) });
    expect(updated.status).toBe(200);
    await updated.text();

    const latest = await chat(id);
    expect(latest.status).toBe(200);
    expect(latest.headers.get('x-gateway-last-used-option-index')).toBe('config');
    await latest.text();
    const pinned = await chat(`${id}@1`);
    expect(pinned.status).toBe(200);
    await pinned.text();
    expect(requestsTo(first.prefix)).toHaveLength(1);
    expect(requestsTo(second.prefix)).toHaveLength(1);
  });
});
