/**
 * Each row of the header table (docs/headers.md): with a config, a header that names a provider,
 * host or cloud setting fills in what a target leaves out, and one that says something else than
 * the target is a 400 naming both; never silently unused. Over HTTP, as a client sends them.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownPath, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { gatewayFetch } from '../support/gateway-client';

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());

const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'which rule?' }] };

function send(config: unknown, headers: Record<string, string> = {}) {
  return gatewayFetch('/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(config === undefined ? {} : { 'x-gateway-config': JSON.stringify(config) }), ...headers },
    body: JSON.stringify(chat),
  });
}

async function expectConflict(response: Response, param: string, says: string[]) {
  const body = (await response.json()) as { error: { code: string; param: string; message: string } };
  expect(response.status, JSON.stringify(body)).toBe(400);
  expect(body.error).toMatchObject({ code: 'config_header_conflict', param });
  for (const words of says) expect(body.error.message).toContain(words);
}

async function expectAnswered(response: Response) {
  const body = await response.json();
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body;
}

describe('x-gateway-provider with a config', () => {
  it('passes when it names the target’s own provider', async () => {
    const host = ownPath(upstream, 'headers', 'same-provider');
    await expectAnswered(await send({ provider: 'openai', api_key: 'sk-a', custom_host: host.custom_host }, { 'x-gateway-provider': 'OpenAI' }));
    expect(host.calls()).toBe(1);
  });

  it('is refused when it names another provider than the target', async () => {
    const host = ownPath(upstream, 'headers', 'other-provider');
    await expectConflict(
      await send({ provider: 'openai', api_key: 'sk-a', custom_host: host.custom_host }, { 'x-gateway-provider': 'anthropic' }),
      'x-gateway-provider',
      ['"anthropic"', 'config.provider is "openai"'],
    );
    expect(host.calls()).toBe(0);
  });

  it('is refused when it names another catalog entry than the target', async () => {
    await expectConflict(await send({ provider: '@team-a' }, { 'x-gateway-provider': '@team-b' }), 'x-gateway-provider', ['"@team-b"', '"@team-a"']);
  });

  it('selects the provider of a target that names none', async () => {
    const host = ownPath(upstream, 'headers', 'fill-provider');
    await expectAnswered(
      await send({ retry: { attempts: 1 }, custom_host: host.custom_host }, { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-h' }),
    );
    expect(host.calls()).toBe(1);
  });
});

describe('x-gateway-virtual-key with a config', () => {
  it('is refused when the target names another provider', async () => {
    await expectConflict(await send({ provider: 'openai', api_key: 'sk-a' }, { 'x-gateway-virtual-key': 'team-b' }), 'x-gateway-virtual-key', [
      '"team-b"',
      'config.provider is "openai"',
    ]);
  });
});

describe('x-gateway-custom-host with a config', () => {
  it('sends a target that names its provider but no host to the header’s host', async () => {
    const host = ownPath(upstream, 'headers', 'fill-host');
    await expectAnswered(
      await send({ provider: 'openai', cache: { mode: 'simple' } }, { 'x-gateway-custom-host': host.custom_host, authorization: 'Bearer sk-h' }),
    );
    expect(host.calls()).toBe(1);
    expect(upstream.requests.at(-1)?.headers.authorization).toBe('Bearer sk-h');
  });

  it('is refused when the target has another host, inherited or its own', async () => {
    const own = ownPath(upstream, 'headers', 'own-host');
    const other = ownPath(upstream, 'headers', 'other-host');
    await expectConflict(
      await send({ provider: 'openai', api_key: 'sk-a', custom_host: own.custom_host }, { 'x-gateway-custom-host': other.custom_host }),
      'x-gateway-custom-host',
      [other.custom_host, `config.custom_host is "${own.custom_host}"`],
    );
    await expectConflict(
      await send(
        { strategy: { mode: 'fallback' }, custom_host: own.custom_host, targets: [{ provider: 'openai', api_key: 'sk-a' }] },
        { 'x-gateway-custom-host': other.custom_host },
      ),
      'x-gateway-custom-host',
      ['config.targets[0].custom_host'],
    );
    expect(own.calls() + other.calls()).toBe(0);
  });

  it('passes when it names the target’s own host', async () => {
    const own = ownPath(upstream, 'headers', 'same-host');
    await expectAnswered(await send({ provider: 'openai', api_key: 'sk-a', custom_host: own.custom_host }, { 'x-gateway-custom-host': `${own.custom_host}/` }));
    expect(own.calls()).toBe(1);
  });

  it('is refused for a catalog provider named inside a config', async () => {
    const stored = ownPath(upstream, 'headers', 'catalog-host');
    const other = ownPath(upstream, 'headers', 'catalog-elsewhere');
    const slug = `hdr-${randomBytes(4).toString('hex')}`;
    const created = await gatewayFetch('/providers', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ slug, provider: 'openai', custom_host: stored.custom_host, api_key: 'sk-stored' }),
    });
    expect(created.status).toBe(200);
    const response = await send({ provider: `@${slug}` }, { 'x-gateway-custom-host': other.custom_host });
    const body = (await response.json()) as { error: { code: string; param: string } };
    expect(response.status).toBe(400);
    expect(body.error).toMatchObject({ code: 'catalog_host_fixed', param: 'x-gateway-custom-host' });
    expect(stored.calls() + other.calls()).toBe(0);
  });
});

describe('cloud headers with a config', () => {
  const azure = (host: string, extra: Record<string, unknown> = {}) => ({
    provider: 'azure-openai',
    api_key: 'az-key',
    custom_host: `${host}/openai`,
    cloudC_deployment_id: 'gpt4o-prod',
    ...extra,
  });

  it('fill in a setting the target leaves out', async () => {
    const host = ownPath(upstream, 'headers', 'cloud-fill');
    await expectAnswered(await send(azure(host.custom_host), { 'x-gateway-cloudc-api-version': '2024-10-21' }));
    expect(upstream.requests.at(-1)?.path).toBe(`${host.prefix}/v1/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21`);
  });

  it('are refused when they say another value than the target', async () => {
    const host = ownPath(upstream, 'headers', 'cloud-other');
    await expectConflict(
      await send(azure(host.custom_host, { cloudC_api_version: '2024-06-01' }), { 'x-gateway-cloudc-api-version': '2024-10-21' }),
      'x-gateway-cloudc-api-version',
      ['"2024-10-21"', 'config.cloudC_api_version is "2024-06-01"'],
    );
    expect(host.calls()).toBe(0);
  });
});

describe('Authorization with a config', () => {
  it('is the key of a target that has none', async () => {
    const host = ownPath(upstream, 'headers', 'auth-fill');
    await expectAnswered(await send({ provider: 'openai', custom_host: host.custom_host }, { authorization: 'Bearer sk-from-header' }));
    expect(upstream.requests.at(-1)?.headers.authorization).toBe('Bearer sk-from-header');
  });

  it('gives way to a target’s own key, as OpenAI’s clients always send one', async () => {
    const host = ownPath(upstream, 'headers', 'auth-own');
    await expectAnswered(
      await send({ provider: 'openai', api_key: 'sk-from-config', custom_host: host.custom_host }, { authorization: 'Bearer sk-from-header' }),
    );
    expect(upstream.requests.at(-1)?.headers.authorization).toBe('Bearer sk-from-config');
  });
});

describe('options headers with a config', () => {
  it('cache headers without a cache setting answer x-gateway-cache-status: DISABLED', async () => {
    const host = ownPath(upstream, 'headers', 'cache-off');
    const response = await send({ provider: 'openai', api_key: 'sk-a', custom_host: host.custom_host }, { 'x-gateway-cache-force-refresh': 'true' });
    await expectAnswered(response);
    expect(response.headers.get('x-gateway-cache-status')).toBe('DISABLED');
  });

  it('x-gateway-request-timeout wins over the config’s request_timeout', async () => {
    const host = ownPath(upstream, 'headers', 'timeout');
    upstream.script(host.prefix, [{ status: 200, json: { never: 'sent in time' }, delayMs: 1_500 }]);
    const response = await send(
      { provider: 'openai', api_key: 'sk-a', custom_host: host.custom_host, request_timeout: 60_000 },
      { 'x-gateway-request-timeout': '300' },
    );
    const body = (await response.json()) as { error: { code: string } };
    expect(response.status).toBe(408);
    expect(body.error.code).toBe('timeout_error');
  });
});
