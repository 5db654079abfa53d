import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDynamoDbCounter, type DynamoDbCounter } from '../support/dynamodb-counter';
import { env, gatewayFetch, spawnSharedGateway } from '../support/gateway-client';
import type { SpawnedGateway } from '../support/spawn-gateway';

const json = { 'content-type': 'application/json' };

async function createKey(role: 'admin' | 'member', name = `${role} key`) {
  const response = await gatewayFetch('/api-keys', { method: 'POST', headers: json, body: JSON.stringify({ name, role }) });
  expect(response.status).toBe(200);
  return (await response.json()) as { id: string; key: string; role: string; name: string; hint: string };
}

describe('gateway authentication', () => {
  it('refuses a request without x-gateway-api-key with 401 and a message saying what to send', async () => {
    const response = await gatewayFetch('/chat/completions', { method: 'POST', headers: { 'x-gateway-api-key': '' }, body: '{}' });
    expect(response.status).toBe(401);
    const body = await response.json();
    expect(body.error.message).toMatch(/x-gateway-api-key/);
    expect(body.error.type).toBe('authentication_error');
  });

  it('refuses an unknown key on every route, pass-through included', async () => {
    for (const [method, path] of [
      ['POST', '/chat/completions'],
      ['GET', '/models'],
      ['GET', '/api-keys'],
      ['GET', '/logs'],
    ]) {
      const response = await gatewayFetch(path, { method, headers: { 'x-gateway-api-key': 'gwk_not_a_real_key' } });
      expect(response.status, `${method} ${path}`).toBe(401);
    }
  });

  it('creates keys, lists them without secrets, and revokes them', async () => {
    const created = await createKey('member', 'ci member');
    expect(created.key).toMatch(/^gwk_/);
    expect(created.id).toMatch(/^key_/);

    const list = await (await gatewayFetch('/api-keys?limit=100')).json();
    expect(list.object).toBe('list');
    const listed = list.data.find((key: any) => key.id === created.id);
    expect(listed).toMatchObject({ name: 'ci member', role: 'member', status: 'active' });
    expect(JSON.stringify(list)).not.toContain(created.key);

    // The new key works at once.
    const works = await gatewayFetch('/logs', { headers: { 'x-gateway-api-key': created.key } });
    expect(works.status).toBe(200);

    const revoked = await gatewayFetch(`/api-keys/${created.id}`, { method: 'DELETE' });
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toMatchObject({ id: created.id, deleted: true });

    // Revocation reaches every warm cache within seconds.
    const deadline = Date.now() + 8_000;
    let status = 200;
    while (Date.now() < deadline && status !== 401) {
      status = (await gatewayFetch('/logs', { headers: { 'x-gateway-api-key': created.key } })).status;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status).toBe(401);
  });

  it('lists keys newest first with a cursor', async () => {
    const a = await createKey('member', 'page a');
    const b = await createKey('member', 'page b');
    const first = await (await gatewayFetch('/api-keys?limit=1')).json();
    expect(first.data[0].id).toBe(b.id);
    expect(first.has_more).toBe(true);
    const second = await (await gatewayFetch(`/api-keys?limit=1&after=${first.last_id}`)).json();
    expect(second.data[0].id).toBe(a.id);
  });

  it('lets only admin keys manage keys', async () => {
    const member = await createKey('member');
    const response = await gatewayFetch('/api-keys', { headers: { 'x-gateway-api-key': member.key } });
    expect(response.status).toBe(403);
    expect((await response.json()).error.message).toMatch(/admin/);
  });

  it('validates key creation input', async () => {
    const response = await gatewayFetch('/api-keys', { method: 'POST', headers: json, body: JSON.stringify({ name: 'bad role', role: 'superuser' }) });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ param: 'role', code: 'invalid_api_key_body' });
    const unknown = await gatewayFetch('/api-keys/key_doesnotexist', { method: 'DELETE' });
    expect(unknown.status).toBe(404);
    const malformed = await gatewayFetch(`/api-keys/${'k'.repeat(2_000)}`, { method: 'DELETE' });
    expect(malformed.status).toBe(404);
    const error = (await malformed.json()).error;
    expect(error.code).toBe('api_key_not_found');
    expect(error.message.length).toBeLessThan(200);
  });

  it('requires a name, and says what to send', async () => {
    const bodies: RequestInit[] = [{}, { headers: json, body: '' }, { headers: json, body: '{}' }, { headers: json, body: '{"role":"admin"}' }];
    for (const init of bodies) {
      const response = await gatewayFetch('/api-keys', { method: 'POST', ...init } as RequestInit & { headers?: Record<string, string> });
      expect(response.status, JSON.stringify(init)).toBe(400);
      const { error } = await response.json();
      expect(error).toMatchObject({ type: 'invalid_request_error', param: 'name', code: 'invalid_api_key_body' });
      expect(error.message).toMatch(/^name is required: send \{"name": .*"role": "admin" \| "member"\}/);
    }
    const blank = await gatewayFetch('/api-keys', { method: 'POST', headers: json, body: JSON.stringify({ name: '  ', role: 'member' }) });
    expect(blank.status).toBe(400);
    expect((await blank.json()).error).toMatchObject({ param: 'name', code: 'invalid_api_key_body' });
  });

  it('gives every invalid request a 400 with a code', async () => {
    const posts = [
      { name: 5 },
      { name: 'x'.repeat(256) },
      { name: 'ok', role: 'superuser' },
      { name: 'ok', role: null },
      { name: 'ok', scopes: ['read'] },
      [],
      'not json',
    ];
    for (const body of posts) {
      const response = await gatewayFetch('/api-keys', { method: 'POST', headers: json, body: typeof body === 'string' ? body : JSON.stringify(body) });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect((await response.json()).error.code, JSON.stringify(body)).toMatch(/^[a-z_]+$/);
    }
    const list = await gatewayFetch('/api-keys?limit=0');
    expect(list.status).toBe(400);
    expect((await list.json()).error.code).toBe('invalid_limit');
  });
});

describe('unknown and oversized keys', () => {
  let counter: DynamoDbCounter;
  let gateway: SpawnedGateway;
  const keyLookups = () => counter.getItemsStartingWith('APIKEY#');
  const logsWith = (key: string) => fetch(`${gateway.url}/logs?limit=1`, { headers: { 'x-gateway-api-key': key } });

  // A gateway of its own whose DynamoDB calls pass through a counter, so lookups can be counted.
  beforeAll(async () => {
    counter = await startDynamoDbCounter(env().endpoints.dynamodb);
    gateway = await spawnSharedGateway({ GATEWAY_DYNAMODB_ENDPOINT: counter.url });
  });
  afterAll(async () => {
    await gateway?.stop();
    await counter?.close();
  });

  it('refuses a key far longer than any gateway key with a 401 that says so, without a lookup', async () => {
    const before = keyLookups();
    for (let i = 0; i < 100; i++) {
      const response = await logsWith(`gwk_${i}_${'x'.repeat(9_000)}`);
      expect(response.status).toBe(401);
      const { error } = (await response.json()) as any;
      expect(error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
      expect(error.message).toMatch(/x-gateway-api-key: it is \d+ characters long, and gateway API keys have at most 256/);
    }
    expect(keyLookups()).toBe(before);
  });

  it('serves a valid key from memory while thousands of unknown keys are tried', async () => {
    const member = await createKey('member', 'kept in memory');
    const memberItem = `APIKEY#${createHash('sha256').update(member.key).digest('hex')}`;
    const started = Date.now();
    for (let round = 0; round < 20; round++) {
      expect((await logsWith(member.key)).status).toBe(200);
      const junk = Array.from({ length: 100 }, (_, i) => logsWith(`gwk_junk_${round}_${i}_${'j'.repeat(200)}`));
      for (const response of await Promise.all(junk)) expect(response.status).toBe(401);
    }
    expect((await logsWith(member.key)).status).toBe(200);
    // A valid key is read again only once its 5 s in memory are over, however many junk keys came in between.
    const reloadsAllowed = Math.floor((Date.now() - started) / 5_000);
    expect(counter.getItems(memberItem)).toBeLessThanOrEqual(1 + reloadsAllowed);
    expect(keyLookups()).toBeGreaterThanOrEqual(2_000);
  }, 60_000);
});

describe('owner keys and hints', () => {
  async function createOwnerKey(name: string) {
    const response = await gatewayFetch('/api-keys', { method: 'POST', headers: json, body: JSON.stringify({ name, role: 'owner' }) });
    expect(response.status).toBe(200);
    return (await response.json()) as { id: string; key: string; hint: string };
  }
  // Other files add keys to this workspace too: read every page.
  async function allKeys(): Promise<any[]> {
    const keys: any[] = [];
    for (let after = ''; ; ) {
      const page = await (await gatewayFetch(`/api-keys?limit=100${after ? `&after=${after}` : ''}`)).json();
      keys.push(...page.data);
      if (!page.has_more) return keys;
      after = page.last_id;
    }
  }
  const statusOf = async (id: string) => (await allKeys()).find((key: any) => key.id === id)?.status;

  it('refuses an admin that revokes an owner key with 403, and lets an owner revoke it', async () => {
    const owner = await createOwnerKey('owner revoked by an owner');
    const admin = await createKey('admin', 'admin that tries');
    const refused = await gatewayFetch(`/api-keys/${owner.id}`, { method: 'DELETE', headers: { 'x-gateway-api-key': admin.key } });
    expect(refused.status).toBe(403);
    const { error } = await refused.json();
    expect(error).toMatchObject({ type: 'permission_error', code: 'owner_required' });
    expect(error.message).toBe('Only an owner key may revoke an owner key; the key used has the admin role.');
    expect(await statusOf(owner.id)).toBe('active');

    // The shared gateway's own key is an owner too, so this one is not the last.
    const revoked = await gatewayFetch(`/api-keys/${owner.id}`, { method: 'DELETE' });
    expect(revoked.status).toBe(200);
    expect(await statusOf(owner.id)).toBe('revoked');
    // An admin still revokes admin and member keys.
    const member = await createKey('member', 'revoked by an admin');
    expect((await gatewayFetch(`/api-keys/${member.id}`, { method: 'DELETE', headers: { 'x-gateway-api-key': admin.key } })).status).toBe(200);
  });

  it('shows at most the last 4 characters of a key in its hint (and the gwk_ every generated key starts with)', async () => {
    const member = await createKey('member', 'hinted');
    expect(member.hint).toBe(`gwk_…${member.key.slice(-4)}`);
    const listed = await allKeys();
    expect(listed.find((key: any) => key.id === member.id).hint).toBe(member.hint);
    for (const key of listed) expect(key.hint, key.name).toMatch(/^(gwk_)?….{4}$/);
    // GATEWAY_ADMIN_KEY is the operator's choice: even its first characters are part of the secret.
    const operatorHints = listed.filter((key: any) => key.name === 'Owner key (GATEWAY_ADMIN_KEY)').map((key: any) => key.hint);
    expect(operatorHints).toContain(`…${env().adminKey.slice(-4)}`);
  });
});
