import { describe, expect, it } from 'vitest';
import { startFakeUpstream } from '../support/fake-upstream';
import { gatewayFetch, openaiClient, waitForLogs, type TestResponse } from '../support/gateway-client';

const json = { 'content-type': 'application/json' };

/** The shared gateway's key is GATEWAY_ADMIN_KEY, which installs an owner. */
async function asOwner(method: string, path: string, body?: unknown): Promise<TestResponse> {
  return gatewayFetch(path, { method, headers: json, body: body === undefined ? undefined : JSON.stringify(body) });
}

async function as(key: string, method: string, path: string, body?: unknown): Promise<TestResponse> {
  return gatewayFetch(path, { method, headers: { ...json, 'x-gateway-api-key': key }, body: body === undefined ? undefined : JSON.stringify(body) });
}

async function ok(response: TestResponse | Promise<TestResponse>): Promise<any> {
  const answered = await response;
  const body = await answered.json();
  expect(answered.status, JSON.stringify(body)).toBe(200);
  return body;
}

async function error(response: TestResponse | Promise<TestResponse>, status: number): Promise<any> {
  const answered = await response;
  const body = await answered.json();
  expect(answered.status, JSON.stringify(body)).toBe(status);
  return body.error;
}

async function newWorkspace(name: string) {
  return ok(asOwner('POST', '/workspaces', { name, description: `${name} team` }));
}

async function keyFor(workspaceId: string, role: 'admin' | 'member', name = `${role} of ${workspaceId}`) {
  return ok(asOwner('POST', '/api-keys', { name, role, workspace_id: workspaceId }));
}

describe('workspaces', () => {
  it('lets an owner create one, list, read and change it, and give it keys', async () => {
    const created = await newWorkspace('Research Lab');
    expect(created).toMatchObject({
      object: 'workspace',
      name: 'Research Lab',
      slug: 'research-lab',
      description: 'Research Lab team',
      status: 'active',
      is_default: false,
      archived_at: null,
    });
    expect(created.id).toMatch(/^ws_[0-9a-z]{26}$/);

    const listed = await ok(asOwner('GET', '/workspaces?limit=100'));
    expect(listed.object).toBe('list');
    expect(listed.total).toBe(listed.data.length);
    const ids = listed.data.map((workspace: any) => workspace.id);
    expect(ids).toContain(created.id);
    expect(listed.data.filter((workspace: any) => workspace.is_default)).toHaveLength(1);
    const first = await ok(asOwner('GET', '/workspaces?limit=1'));
    const second = await ok(asOwner('GET', `/workspaces?limit=1&after=${first.last_id}`));
    expect([first.has_more, first.total, [...first.data, ...second.data].map((workspace: any) => workspace.id)]).toEqual([true, listed.total, ids.slice(0, 2)]);

    expect(await ok(asOwner('GET', `/workspaces/${created.id}`))).toEqual(created);
    const renamed = await ok(asOwner('PUT', `/workspaces/${created.id}`, { name: 'Research', description: null }));
    expect(renamed).toMatchObject({ id: created.id, name: 'Research', slug: 'research', description: null, status: 'active' });
    expect(renamed.last_updated_at).toBeGreaterThanOrEqual(created.last_updated_at);

    const admin = await keyFor(created.id, 'admin');
    expect(admin).toMatchObject({ object: 'api_key', role: 'admin', workspace_id: created.id });
    const ownerKeys = await ok(asOwner('GET', '/api-keys?limit=100'));
    expect(ownerKeys.data.map((key: any) => key.id)).not.toContain(admin.id);
    const theirKeys = await ok(as(admin.key, 'GET', '/api-keys'));
    expect(theirKeys.data.map((key: any) => key.id)).toEqual([admin.id]);
  });

  it('keeps each workspace to itself: keys, configs, providers and logs', async () => {
    const other = await newWorkspace('Isolated');
    const admin = (await keyFor(other.id, 'admin')).key;
    const upstream = await startFakeUpstream();
    try {
      const config = await ok(
        as(admin, 'POST', '/configs', { name: 'theirs', config: { provider: 'openai', api_key: 'sk-theirs', custom_host: `${upstream.url}/v1` } }),
      );
      const provider = await ok(
        as(admin, 'POST', '/providers', {
          slug: 'isolated-openai',
          provider: 'openai',
          name: 'Theirs',
          api_key: 'sk-theirs',
          custom_host: `${upstream.url}/v1`,
        }),
      );

      // The owner acts in its own (default) workspace: the other workspace's things do not exist there.
      expect((await ok(asOwner('GET', '/configs?limit=100'))).data.map((entry: any) => entry.id)).not.toContain(config.id);
      await error(asOwner('GET', `/configs/${config.id}`), 404);
      await error(asOwner('GET', `/providers/${provider.slug}`), 404);
      const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'whose config?' }] };
      const refused = await gatewayFetch('/chat/completions', {
        method: 'POST',
        headers: { ...json, 'x-gateway-config': config.id },
        body: JSON.stringify(chat),
      });
      expect((await refused.json()).error.code).toBe('config_not_found');

      // In its own workspace the config works, and its log is its workspace's alone.
      const traceId = `ws-isolation-${Date.now()}`;
      const answer = await openaiClient({
        gatewayKey: admin,
        headers: { 'x-gateway-config': config.id, 'x-gateway-trace-id': traceId },
      }).chat.completions.create(chat as any);
      expect(answer.choices[0].message.content).toContain('whose config?');
      const [record] = await waitForLogs(traceId, { gatewayKey: admin });
      expect(record.workspace_id).toBe(other.id);
      await error(gatewayFetch(`/logs/${traceId}`), 404);
    } finally {
      await upstream.close();
    }
  });

  it('shows other keys only their own workspace, and keeps workspace changes to owners', async () => {
    const team = await newWorkspace('Team');
    const admin = (await keyFor(team.id, 'admin')).key;
    const member = (await keyFor(team.id, 'member')).key;
    const defaultWorkspace = (await ok(asOwner('GET', '/workspaces?limit=100'))).data.find((workspace: any) => workspace.is_default);

    for (const key of [admin, member]) {
      const listed = await ok(as(key, 'GET', '/workspaces'));
      expect(listed.data.map((workspace: any) => workspace.id)).toEqual([team.id]);
      expect(listed.total).toBe(1);
      expect((await ok(as(key, 'GET', `/workspaces/${team.id}`))).id).toBe(team.id);
      await error(as(key, 'GET', `/workspaces/${defaultWorkspace.id}`), 404);
    }
    expect((await error(as(member, 'GET', '/workspaces?status=archived&limit=100'), 403)).code).toBe('admin_required');
    expect((await ok(as(admin, 'GET', '/workspaces?status=archived&limit=100'))).data).toEqual([]);

    for (const [method, path, body] of [
      ['POST', '/workspaces', { name: 'Not mine to make' }],
      ['PUT', `/workspaces/${team.id}`, { name: 'Renamed' }],
      ['DELETE', `/workspaces/${team.id}`, undefined],
    ] as const) {
      expect((await error(as(admin, method, path, body), 403)).code, `${method} ${path}`).toBe('owner_required');
    }
    expect((await error(as(admin, 'POST', '/api-keys', { name: 'escalate', role: 'owner' }), 403)).code).toBe('owner_required');
    expect((await error(as(admin, 'POST', '/api-keys', { name: 'elsewhere', workspace_id: defaultWorkspace.id }), 403)).code).toBe('owner_required');
    const ownerKey = await ok(asOwner('POST', '/api-keys', { name: 'second owner', role: 'owner' }));
    expect(ownerKey).toMatchObject({ role: 'owner', workspace_id: defaultWorkspace.id });
    expect((await ok(as(ownerKey.key, 'GET', '/workspaces'))).total).toBeGreaterThan(1);
  });

  it('archives a workspace: its keys stop working within seconds, and it lists as archived', async () => {
    const doomed = await newWorkspace('Doomed');
    const member = (await keyFor(doomed.id, 'member')).key;
    await ok(as(member, 'GET', '/workspaces'));

    const archived = await ok(asOwner('DELETE', `/workspaces/${doomed.id}`));
    expect(archived).toMatchObject({ id: doomed.id, status: 'archived' });
    expect(archived.archived_at).toEqual(expect.any(Number));

    const deadline = Date.now() + 10_000;
    let status = 200;
    while (Date.now() < deadline && (status = (await as(member, 'GET', '/workspaces')).status) === 200)
      await new Promise((resolve) => setTimeout(resolve, 250));
    expect(status).toBe(401);

    expect((await ok(asOwner('GET', '/workspaces?limit=100'))).data.map((workspace: any) => workspace.id)).not.toContain(doomed.id);
    expect((await ok(asOwner('GET', '/workspaces?status=archived&limit=100'))).data.map((workspace: any) => workspace.id)).toContain(doomed.id);
    const both = (await ok(asOwner('GET', '/workspaces?status=active,archived&limit=100'))).data;
    expect(both.some((workspace: any) => workspace.is_default) && both.some((workspace: any) => workspace.id === doomed.id)).toBe(true);
    expect((await error(asOwner('POST', '/api-keys', { name: 'late', workspace_id: doomed.id }), 409)).code).toBe('workspace_archived');

    // Made active again, its keys (never revoked) work again.
    await ok(asOwner('PUT', `/workspaces/${doomed.id}`, { status: 'active' }));
    const back = Date.now() + 10_000;
    while (Date.now() < back && (status = (await as(member, 'GET', '/workspaces')).status) !== 200) await new Promise((resolve) => setTimeout(resolve, 250));
    expect(status).toBe(200);
  });

  it('never archives the default workspace', async () => {
    const defaultWorkspace = (await ok(asOwner('GET', '/workspaces?limit=100'))).data.find((workspace: any) => workspace.is_default);
    expect((await error(asOwner('DELETE', `/workspaces/${defaultWorkspace.id}`), 409)).code).toBe('default_workspace');
    expect((await error(asOwner('PUT', `/workspaces/${defaultWorkspace.id}`, { status: 'archived' }), 409)).code).toBe('default_workspace');
    expect((await ok(asOwner('GET', `/workspaces/${defaultWorkspace.id}`))).status).toBe('active');
  });

  it('never archives a workspace that holds active owner keys, which would still count as owners', async () => {
    const held = await newWorkspace('Held by an owner');
    const owner = await ok(asOwner('POST', '/api-keys', { name: 'owner of a team workspace', role: 'owner', workspace_id: held.id }));
    for (const archive of [asOwner('DELETE', `/workspaces/${held.id}`), asOwner('PUT', `/workspaces/${held.id}`, { status: 'archived' })]) {
      const refused = await error(archive, 409);
      expect(refused).toMatchObject({ code: 'workspace_has_owner_keys', param: 'status' });
      expect(refused.message).toContain(owner.id);
    }
    expect((await ok(asOwner('GET', `/workspaces/${held.id}`))).status).toBe('active');

    // Once its owner key is revoked (by a key of that workspace), it can be archived.
    await ok(as(owner.key, 'DELETE', `/api-keys/${owner.id}`));
    expect((await ok(asOwner('DELETE', `/workspaces/${held.id}`))).status).toBe('archived');
  });

  it('answers bad input with a 4xx that names the field', async () => {
    expect(await error(asOwner('POST', '/workspaces', {}), 400)).toMatchObject({ param: 'name', code: 'invalid_workspace_body' });
    expect(await error(asOwner('POST', '/workspaces', { name: '   ' }), 400)).toMatchObject({ param: 'name', code: 'invalid_workspace_body' });
    expect(await error(asOwner('POST', '/workspaces', { name: 'x', colour: 'red' }), 400)).toMatchObject({ param: 'colour', code: 'invalid_workspace_body' });
    expect(await error(asOwner('POST', '/workspaces', { name: 'x', description: 'd'.repeat(1001) }), 400)).toMatchObject({ param: 'description' });
    const team = await newWorkspace('Validation');
    expect(await error(asOwner('PUT', `/workspaces/${team.id}`, {}), 400)).toMatchObject({ code: 'invalid_workspace_body' });
    expect(await error(asOwner('PUT', `/workspaces/${team.id}`, { status: 'deleted' }), 400)).toMatchObject({ param: 'status' });
    expect(await error(asOwner('GET', '/workspaces?status=gone'), 400)).toMatchObject({ param: 'status' });
    expect((await error(asOwner('GET', '/workspaces/not-a-workspace'), 404)).code).toBe('workspace_not_found');
    expect((await error(asOwner('GET', '/workspaces/ws_00000000000000000000000000'), 404)).code).toBe('workspace_not_found');
    expect(await error(asOwner('POST', '/api-keys', { name: 'nowhere', workspace_id: 'ws_00000000000000000000000000' }), 400)).toMatchObject({
      param: 'workspace_id',
      code: 'workspace_not_found',
    });
  });

  it('lets a workspace admin set its semantic cache settings, checked against its catalog', async () => {
    const team = await newWorkspace('Semantic');
    const admin = (await keyFor(team.id, 'admin')).key;
    const member = (await keyFor(team.id, 'member')).key;
    await ok(as(admin, 'POST', '/providers', { slug: 'embedder', provider: 'openai', name: 'Embeddings', api_key: 'sk-embed' }));
    await ok(as(admin, 'POST', '/providers', { slug: 'claude', provider: 'anthropic', name: 'Chat only', api_key: 'sk-ant' }));

    const set = await ok(as(admin, 'PUT', `/workspaces/${team.id}`, { cache: { embedding_provider: '@embedder', embedding_model: 'text-embedding-3-small' } }));
    expect(set.cache).toEqual({ embedding_provider: '@embedder', embedding_model: 'text-embedding-3-small', similarity_threshold: 0.95 });
    expect((await ok(as(member, 'GET', `/workspaces/${team.id}`))).cache.similarity_threshold).toBe(0.95);

    expect(await error(as(admin, 'PUT', `/workspaces/${team.id}`, { cache: { embedding_provider: '@nobody', embedding_model: 'm' } }), 400)).toMatchObject({
      param: 'cache.embedding_provider',
      code: 'unknown_provider',
    });
    expect(await error(as(admin, 'PUT', `/workspaces/${team.id}`, { cache: { embedding_provider: '@claude', embedding_model: 'm' } }), 400)).toMatchObject({
      param: 'cache.embedding_provider',
      code: 'unsupported_operation',
    });
    expect(
      await error(
        as(admin, 'PUT', `/workspaces/${team.id}`, { cache: { embedding_provider: '@embedder', embedding_model: 'm', similarity_threshold: 1.5 } }),
        400,
      ),
    ).toMatchObject({ param: 'cache.similarity_threshold' });
    expect(await error(as(admin, 'PUT', `/workspaces/${team.id}`, { cache: { embedding_provider: 'embedder', embedding_model: 'm' } }), 400)).toMatchObject({
      param: 'cache.embedding_provider',
    });
    expect((await error(as(member, 'PUT', `/workspaces/${team.id}`, { cache: null }), 403)).code).toBe('admin_required');
    const elsewhere = (await ok(asOwner('GET', '/workspaces?limit=100'))).data.find((workspace: any) => workspace.is_default);
    await error(as(admin, 'PUT', `/workspaces/${elsewhere.id}`, { cache: null }), 404);

    expect((await ok(as(admin, 'PUT', `/workspaces/${team.id}`, { cache: null }))).cache).toBeNull();
  });
});
