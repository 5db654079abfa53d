/**
 * Stored credentials only ever travel to the base URL stored with them: no request header, inline
 * config or inherited setting can send a catalog provider's key to another host.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { gatewayFetch } from '../support/gateway-client';

const unique = () => randomBytes(4).toString('hex');

describe('a catalog provider’s host is fixed', () => {
  let stored: FakeUpstream;
  let attacker: FakeUpstream;
  let storedKey: string;
  let slug: string;
  let bedrockSlug: string;

  const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

  const post = (path: string, headers: Record<string, string>, body: unknown = chat) =>
    gatewayFetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  const admin = (method: string, path: string, body?: unknown) =>
    gatewayFetch(path, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

  /** Every request the attacker's host received, and whether any carried the stored key. */
  const attackerSawKey = () => attacker.requests.some((request) => JSON.stringify(request.headers).includes(storedKey));

  beforeAll(async () => {
    stored = await startFakeUpstream();
    attacker = await startFakeUpstream();
    storedKey = `sk-stored-${randomBytes(16).toString('hex')}`;
    slug = `fixed-${unique()}`;
    expect((await admin('POST', '/providers', { slug, provider: 'openai', custom_host: `${stored.url}/tenant-a/v1`, api_key: storedKey })).status).toBe(200);
    bedrockSlug = `fixed-br-${unique()}`;
    const bedrock = await admin('POST', '/providers', {
      slug: bedrockSlug,
      provider: 'bedrock',
      custom_host: `${stored.url}/bedrock`,
      cloudA_region: 'us-east-1',
      cloudA_access_key_id: 'AKIAEXAMPLEKEY000001',
      cloudA_secret_access_key: 'stored-secret-access-key-0000000000000000',
    });
    expect(bedrock.status).toBe(200);
  });
  afterAll(async () => {
    await stored.close();
    await attacker.close();
  });

  const expectRefused = async (response: Response, param: string) => {
    const body = (await response.json()) as any;
    expect(response.status, JSON.stringify(body)).toBe(400);
    expect(body.error).toMatchObject({ code: 'catalog_host_fixed', param });
    expect(body.error.message).toMatch(/host stored with them/);
    expect(body.error.message).toMatch(/POST \/v1\/providers/);
    expect(attackerSawKey()).toBe(false);
    expect(attacker.requests).toHaveLength(0);
  };

  it('refuses an inline config that pairs @slug with another custom_host (unified route)', async () => {
    const config = { provider: `@${slug}`, custom_host: `${attacker.url}/v1` };
    await expectRefused(await post('/chat/completions', { 'x-gateway-config': JSON.stringify(config) }), 'config.custom_host');
  });

  it('refuses it on pass-through too', async () => {
    const config = { provider: `@${slug}`, custom_host: `${attacker.url}/v1` };
    await expectRefused(await gatewayFetch('/models', { headers: { 'x-gateway-config': JSON.stringify(config) } }), 'config.custom_host');
  });

  it('refuses a custom_host a catalog target inherits from its parent', async () => {
    const config = { strategy: { mode: 'fallback' }, custom_host: `${attacker.url}/v1`, targets: [{ provider: `@${slug}` }] };
    await expectRefused(await post('/chat/completions', { 'x-gateway-config': JSON.stringify(config) }), 'config.targets[0].custom_host');
  });

  it('refuses virtual_key with a custom_host', async () => {
    const config = { virtual_key: slug, custom_host: `${attacker.url}/v1` };
    await expectRefused(await post('/embeddings', { 'x-gateway-config': JSON.stringify(config) }, { model: 'm', input: 'x' }), 'config.custom_host');
  });

  it('refuses x-gateway-custom-host next to x-gateway-provider: @slug or x-gateway-virtual-key', async () => {
    await expectRefused(
      await post('/chat/completions', { 'x-gateway-provider': `@${slug}`, 'x-gateway-custom-host': `${attacker.url}/v1` }),
      'x-gateway-custom-host',
    );
    await expectRefused(
      await gatewayFetch('/models', { headers: { 'x-gateway-virtual-key': slug, 'x-gateway-custom-host': `${attacker.url}/v1` } }),
      'x-gateway-custom-host',
    );
  });

  it('refuses host settings and cloud headers that differ from the stored ones', async () => {
    const region = { provider: `@${bedrockSlug}`, cloudA_region: 'eu-west-1' };
    await expectRefused(await post('/chat/completions', { 'x-gateway-config': JSON.stringify(region) }), 'config.cloudA_region');
    await expectRefused(
      await post('/chat/completions', { 'x-gateway-provider': `@${bedrockSlug}`, 'x-gateway-cloudA-region': 'eu-west-1' }),
      'x-gateway-clouda-region',
    );
    // A credential header cannot be mixed with the stored credentials either.
    await expectRefused(
      await post('/chat/completions', { 'x-gateway-provider': `@${bedrockSlug}`, 'x-gateway-cloudA-access-key-id': 'AKIAOTHER' }),
      'x-gateway-clouda-access-key-id',
    );
    const resource = { provider: `@${slug}`, cloudC_resource_name: 'attacker' };
    await expectRefused(await post('/chat/completions', { 'x-gateway-config': JSON.stringify(resource) }), 'config.cloudC_resource_name');
  });

  it('sends the stored key to the stored base URL, also when a config repeats the stored host', async () => {
    const before = stored.requests.length;
    const plain = await post('/chat/completions', { 'x-gateway-provider': `@${slug}` });
    expect(plain.status).toBe(200);
    const same = await post('/chat/completions', { 'x-gateway-config': JSON.stringify({ provider: `@${slug}`, custom_host: `${stored.url}/tenant-a/v1/` }) });
    expect(same.status).toBe(200);
    const sent = stored.requests.slice(before);
    expect(sent.map((request) => request.path)).toEqual(['/tenant-a/v1/chat/completions', '/tenant-a/v1/chat/completions']);
    expect(sent.every((request) => request.headers.authorization === `Bearer ${storedKey}`)).toBe(true);
  });

  it('still sends a key the caller sent itself to the caller’s custom host', async () => {
    const response = await post('/chat/completions', {
      'x-gateway-provider': 'openai',
      authorization: 'Bearer sk-callers-own',
      'x-gateway-custom-host': `${attacker.url}/v1`,
    });
    expect(response.status).toBe(200);
    expect(attacker.requests.at(-1)?.headers.authorization).toBe('Bearer sk-callers-own');
    attacker.reset();
  });

  it('makes an update that moves the host send the credentials again', async () => {
    const moved = await admin('PUT', `/providers/${slug}`, { provider: 'openai', custom_host: `${attacker.url}/v1` });
    const body = (await moved.json()) as any;
    expect(moved.status).toBe(400);
    expect(body.error).toMatchObject({ code: 'credentials_required' });
    const regionMoved = await admin('PUT', `/providers/${slug}`, {
      provider: 'openai',
      custom_host: `${stored.url}/tenant-a/v1`,
      cloudB_region: 'europe-west4',
    });
    expect(regionMoved.status).toBe(400);
    // Renaming keeps the host and the stored key.
    expect((await admin('PUT', `/providers/${slug}`, { provider: 'openai', name: 'renamed', custom_host: `${stored.url}/tenant-a/v1` })).status).toBe(200);
    const rekeyed = await admin('PUT', `/providers/${slug}`, { provider: 'openai', custom_host: `${stored.url}/tenant-b/v1`, api_key: `sk-new-${unique()}` });
    expect(rekeyed.status).toBe(200);
    expect(attacker.requests).toHaveLength(0);
  });
});
