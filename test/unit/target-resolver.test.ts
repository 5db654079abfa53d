import { describe, expect, it } from 'vitest';
import { memoryStores } from '../../lib/inference/memory-stores';
import { resolveTarget, targetResolver, type ProviderCredentials } from '../../lib/inference/target';
import { buildPlan, leavesOf } from '../../lib/routing/plan';

const { catalog } = memoryStores();

describe('targetResolver', () => {
  it('resolves each leaf once per request, however often it is attempted', async () => {
    const plan = buildPlan({
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'openai', api_key: 'sk-a' },
        { provider: 'anthropic', api_key: 'sk-b' },
      ],
    });
    const [first, second] = leavesOf(plan);
    const targetOf = targetResolver(catalog, {}, 'ws_test', { fromConfig: true, saved: false });
    const attempts = [targetOf(first!), targetOf(first!), targetOf(second!)];
    expect(attempts[0]).toBe(attempts[1]);
    expect(attempts[2]).not.toBe(attempts[0]);
    const [a, again, b] = await Promise.all(attempts);
    expect(a).toBe(again);
    expect([a.provider.name, a.settings.api_key, b.provider.name]).toEqual(['openai', 'sk-a', 'anthropic']);
  });
});

describe("a saved target's stored credentials", () => {
  const resolveSaved = (config: Record<string, unknown>, headers: ProviderCredentials) =>
    resolveTarget(catalog, leavesOf(buildPlan(config))[0]!, headers, 'ws_test', true, true);
  const refusal = (param: string) => ({ status: 400, code: 'catalog_host_fixed', param });

  it('never go to a host, provider, catalog entry or cloud setting a request names when the target names no provider', async () => {
    const stored = { api_key: 'sk-stored', retry: { attempts: 1 } };
    await expect(resolveSaved(stored, { customHost: 'http://attacker.example/v1' })).rejects.toMatchObject(refusal('x-gateway-custom-host'));
    await expect(resolveSaved(stored, { provider: 'anthropic' })).rejects.toMatchObject(refusal('x-gateway-provider'));
    await expect(resolveSaved(stored, { provider: '@other' })).rejects.toMatchObject(refusal('x-gateway-provider'));
    await expect(resolveSaved(stored, { virtualKey: 'other' })).rejects.toMatchObject(refusal('x-gateway-virtual-key'));
    await expect(
      resolveSaved({ cloudA_access_key_id: 'AKIA', cloudA_secret_access_key: 's' }, { cloud: { cloudA_region: 'us-east-1' } }),
    ).rejects.toMatchObject(refusal('x-gateway-clouda-region'));
    // Inside a fallback, and with an inherited host the header differs from.
    await expect(resolveSaved({ strategy: { mode: 'fallback' }, targets: [stored] }, { customHost: 'http://attacker.example/v1' })).rejects.toMatchObject(
      refusal('x-gateway-custom-host'),
    );
    await expect(
      resolveSaved({ provider: 'openai', api_key: 'sk-stored', custom_host: 'http://models.example/v1' }, { customHost: 'http://attacker.example/v1' }),
    ).rejects.toMatchObject(refusal('x-gateway-custom-host'));
  });

  it('go to the destination stored with them, which a request may repeat', async () => {
    const withHost = await resolveSaved(
      { api_key: 'sk-stored', custom_host: 'http://models.example/v1' },
      { customHost: 'http://models.example/v1/', provider: 'openai' },
    );
    expect([withHost.baseUrl, withHost.settings.api_key]).toEqual(['http://models.example/v1', 'sk-stored']);
    const named = await resolveSaved({ provider: 'openai', api_key: 'sk-stored' }, {});
    expect(named.settings.api_key).toBe('sk-stored');
  });

  it("are the caller's own in an inline config, which may name its host by header", async () => {
    const inline = await resolveTarget(
      catalog,
      leavesOf(buildPlan({ api_key: 'sk-inline' }))[0]!,
      { customHost: 'http://models.example/v1' },
      'ws_test',
      true,
      false,
    );
    expect([inline.baseUrl, inline.settings.api_key]).toEqual(['http://models.example/v1', 'sk-inline']);
  });
});
