/**
 * Stored secrets stay with the destination they were stored for: a saved config's provider key and
 * a saved check's headers are never sent to a host that a request names, and an edit that keeps a
 * secret without sending it again cannot move it. The "attacker" is a path of its own on a loopback
 * fake upstream that records what reaches it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSavedConfig } from '../../lib/config/saved-configs';
import { env, type TestResponse } from '../support/gateway-client';
import { connectToGatewayStore, secretCheckingCaller } from '../support/gateway-store';
import { ownPath, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';

const sentSecrets: string[] = [];
function secret(prefix = 'sk-stored-') {
  const value = `${prefix}${randomBytes(16).toString('hex')}`;
  sentSecrets.push(value);
  return value;
}
const call = secretCheckingCaller(sentSecrets);
const store = connectToGatewayStore();

let upstream: FakeUpstream;
let memberKey: string;
beforeAll(async () => {
  upstream = await startFakeUpstream();
  const created = await call('POST', '/api-keys', { name: 'member for secret destinations', role: 'member' });
  memberKey = created.body.key;
});
afterAll(() => upstream.close());

const chatBody = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'where does my key go' }] });

function chatAsMember(headers: Record<string, string>): Promise<TestResponse> {
  return fetch(`${env().gatewayUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': memberKey, ...headers },
    body: chatBody,
  });
}

/** Every request that reached a path of the fake, with the key it carried. */
const keysSeenBy = (prefix: string) => upstream.requests.filter((request) => request.path.startsWith(prefix)).map((request) => request.headers.authorization);

describe("a saved config's provider key", () => {
  it('cannot be saved without the provider or host it belongs to', async () => {
    const unbound = await call('POST', '/configs', { name: 'unbound', config: { api_key: secret(), retry: { attempts: 1 } } });
    expect(unbound.status).toBe(400);
    expect(unbound.body.error.param).toBe('config.provider');
    expect(unbound.body.error.message).toContain('stores api_key');

    const fallback = await call('POST', '/configs', {
      name: 'unbound fallback',
      config: { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: secret() }, { api_key: secret() }] },
    });
    expect(fallback.status).toBe(400);
    expect(JSON.stringify(fallback.body)).toContain('config.targets[1].provider');

    const cloud = await call('POST', '/configs', {
      name: 'unbound cloud key',
      config: { retry: { attempts: 1 }, cloudA_access_key_id: 'AKIAEXAMPLE', cloudA_secret_access_key: secret('aws-') },
    });
    expect(cloud.status).toBe(400);

    // Bound by a provider, a catalog slug, its own host or an inherited one: saved.
    for (const config of [
      { provider: 'openai', api_key: secret() },
      { provider: '@some-entry', api_key: secret() },
      { provider: 'openai', custom_host: 'http://127.0.0.1:9/v1', api_key: secret() },
      { strategy: { mode: 'fallback' }, custom_host: 'http://127.0.0.1:9/v1', targets: [{ api_key: secret() }] },
    ]) {
      const saved = await call('POST', '/configs', { name: 'bound', config });
      expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    }
  });

  it('saved by an older version without a provider, never goes to a host, provider or catalog entry a request names', async () => {
    const key = secret();
    const attacker = ownPath(upstream, 'attacker', 'legacy');
    const legacy = await createSavedConfig(store.workspaceId, { name: 'legacy', config: { api_key: key, retry: { attempts: 1 } } });
    const legacyFallback = await createSavedConfig(store.workspaceId, {
      name: 'legacy fallback',
      config: { strategy: { mode: 'fallback' }, targets: [{ api_key: key }, { api_key: key }] },
    });
    for (const id of [legacy.id, legacyFallback.id]) {
      const redirects: Array<Record<string, string>> = [
        { 'x-gateway-custom-host': attacker.custom_host },
        { 'x-gateway-custom-host': attacker.custom_host, 'x-gateway-provider': 'openai' },
        { 'x-gateway-provider': 'openai' },
        { 'x-gateway-provider': '@anything' },
      ];
      for (const headers of redirects) {
        const response = await chatAsMember({ 'x-gateway-config': id, ...headers });
        expect(response.status).toBe(400);
        const { error } = await response.json();
        expect(error.code).toBe('catalog_host_fixed');
        expect(error.message).not.toContain(key);
      }
    }
    // Pass-through resolves its targets the same way.
    const passthrough = await fetch(`${env().gatewayUrl}/models`, {
      headers: { 'x-gateway-api-key': memberKey, 'x-gateway-config': legacy.id, 'x-gateway-custom-host': attacker.custom_host },
    });
    expect(passthrough.status).toBe(400);
    expect(((await passthrough.json()) as { error: { code: string } }).error.code).toBe('catalog_host_fixed');
    expect(attacker.calls()).toBe(0);
    expect(upstream.requests.filter((request) => request.headers.authorization === `Bearer ${key}`)).toEqual([]);
  });

  it('with its provider saved, goes to that provider only; a different x-gateway-custom-host is refused, not ignored', async () => {
    const key = secret();
    const home = ownPath(upstream, 'home', 'named');
    const attacker = ownPath(upstream, 'attacker', 'named');
    const saved = await call('POST', '/configs', { name: 'named', config: { provider: 'openai', api_key: key, custom_host: home.custom_host } });
    expect(saved.status).toBe(200);

    const redirected = await chatAsMember({ 'x-gateway-config': saved.body.id, 'x-gateway-custom-host': attacker.custom_host });
    expect(redirected.status).toBe(400);
    expect((await redirected.json()).error).toMatchObject({ code: 'catalog_host_fixed', param: 'x-gateway-custom-host' });

    const same = await chatAsMember({ 'x-gateway-config': saved.body.id, 'x-gateway-custom-host': `${home.custom_host}/` });
    expect(same.status).toBe(200);
    const plain = await chatAsMember({ 'x-gateway-config': saved.body.id });
    expect(plain.status).toBe(200);
    expect(keysSeenBy(home.prefix)).toEqual([`Bearer ${key}`, `Bearer ${key}`]);
    expect(attacker.calls()).toBe(0);
  });
});

describe('an edit that keeps a stored secret', () => {
  it("cannot move a config's key to another host, provider or target without sending the key again", async () => {
    const [first, second] = [secret(), secret()];
    const home = ownPath(upstream, 'home', 'put');
    const attacker = ownPath(upstream, 'attacker', 'put');
    const config = {
      strategy: { mode: 'fallback' },
      custom_host: home.custom_host,
      targets: [
        { provider: 'openai', api_key: first },
        { provider: 'groq', api_key: second },
      ],
    };
    const saved = await call('POST', '/configs', { name: 'movable', config });
    expect(saved.status).toBe(200);
    const masked = saved.body.config;
    const put = (body: unknown) => call('PUT', `/configs/${saved.body.id}`, { config: body });

    // A new inherited host, a new own host, a swapped order and a new provider each move a kept key.
    const moves: Array<[unknown, string]> = [
      [{ ...masked, custom_host: attacker.custom_host }, 'config.targets[0].api_key'],
      [{ ...masked, targets: [{ ...masked.targets[0], custom_host: attacker.custom_host }, masked.targets[1]] }, 'config.targets[0].api_key'],
      [{ ...masked, targets: [masked.targets[1], masked.targets[0]] }, 'config.targets[0].api_key'],
      [{ ...masked, targets: [masked.targets[0], { ...masked.targets[1], provider: 'together-ai' }] }, 'config.targets[1].api_key'],
    ];
    for (const [body, param] of moves) {
      const refused = await put(body);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'credentials_required', param });
    }
    expect((await call('GET', `/configs/${saved.body.id}`)).body.version).toBe(1);

    // Unchanged destinations keep their keys; a move that sends the key again is stored.
    expect((await put({ ...masked, retry: { attempts: 2 } })).status).toBe(200);
    const moved = await put({ ...masked, custom_host: attacker.custom_host, targets: [{ provider: 'openai', api_key: 'sk-new-home-key' }, masked.targets[1]] });
    expect(moved.status).toBe(400);
    expect(moved.body.error.param).toBe('config.targets[1].api_key');
    expect(
      (
        await put({
          ...masked,
          custom_host: attacker.custom_host,
          targets: [
            { provider: 'openai', api_key: 'sk-new-home-key' },
            { provider: 'groq', api_key: 'sk-other' },
          ],
        })
      ).status,
    ).toBe(200);
    expect(attacker.calls()).toBe(0);
  });

  it("cannot move a saved check's headers to another URL, in a saved guardrail or in a config's hook", async () => {
    const token = secret('Bearer tok-');
    const home = ownPath(upstream, 'home', 'webhook');
    const attacker = ownPath(upstream, 'attacker', 'webhook');
    const created = await call('POST', '/guardrails', {
      name: 'judge',
      checks: [{ id: 'default.webhook', parameters: { webhookURL: `${home.custom_host}/judge`, headers: { authorization: token } } }],
    });
    expect(created.status).toBe(200);
    const check = created.body.checks[0];
    const moved = await call('PUT', `/guardrails/${created.body.id}`, {
      name: 'judge',
      checks: [{ ...check, parameters: { ...check.parameters, webhookURL: `${attacker.custom_host}/judge` } }],
    });
    expect(moved.status).toBe(400);
    expect(moved.body.error).toMatchObject({ code: 'credentials_required', param: 'checks[0].parameters.headers' });
    expect(
      (
        await call('PUT', `/guardrails/${created.body.id}`, {
          name: 'judge',
          checks: [{ ...check, id: 'default.log', parameters: { logURL: `${attacker.custom_host}/judge`, headers: '********' } }],
        })
      ).status,
    ).toBe(400);
    expect((await call('PUT', `/guardrails/${created.body.id}`, { name: 'judge renamed', checks: [check] })).status).toBe(200);
    expect(
      (
        await call('PUT', `/guardrails/${created.body.id}`, {
          name: 'judge',
          checks: [{ ...check, parameters: { ...check.parameters, webhookURL: `${attacker.custom_host}/judge`, headers: { authorization: 'Bearer new' } } }],
        })
      ).status,
    ).toBe(200);

    const hook = {
      id: 'judge',
      type: 'guardrail',
      checks: [{ id: 'default.webhook', parameters: { webhookURL: `${home.custom_host}/judge`, headers: { authorization: token } } }],
    };
    const saved = await call('POST', '/configs', { name: 'hooked', config: { provider: 'openai', before_request_hooks: [hook] } });
    expect(saved.status).toBe(200);
    const masked = saved.body.config;
    const hookMoved = structuredClone(masked);
    hookMoved.before_request_hooks[0].checks[0].parameters.webhookURL = `${attacker.custom_host}/judge`;
    const refused = await call('PUT', `/configs/${saved.body.id}`, { config: hookMoved });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'credentials_required', param: 'config.before_request_hooks[0].checks[0].parameters.headers' });
    expect(attacker.calls()).toBe(0);
  });
});
