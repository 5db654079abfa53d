/**
 * `/v1/mcp-servers` through a gateway process of its own (on the shared emulators, so its output
 * can be searched for the stored header values), against MCP servers on loopback built with the
 * SDK's server side (test/support/mcp-test-server.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSharedGateway } from '../support/gateway-client';
import { startMcpTestServer, type McpTestServer } from '../support/mcp-test-server';
import type { SpawnedGateway } from '../support/spawn-gateway';

const token = `mcp-secret-token-${Date.now()}-abcdefghijklmnop`;
let gateway: SpawnedGateway;
let mcp: McpTestServer;
/** Every answer body the gateway gave in this file, to search for the stored header values. */
const answers: string[] = [];
let adminKey: string;

async function call(method: string, path: string, body?: unknown, key = adminKey): Promise<{ status: number; body: any }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  answers.push(text);
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function register(path: string, headers: Record<string, string> = {}): Promise<string> {
  const created = await call('POST', '/mcp-servers', { name: `server ${path}`, url: path.startsWith('http') ? path : mcp.url(path), headers });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

beforeAll(async () => {
  gateway = await spawnSharedGateway();
  const { inject } = await import('vitest');
  adminKey = inject('env').adminKey;
  mcp = await startMcpTestServer(token);
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  await gateway?.stop();
});

describe('MCP servers', () => {
  it('are stored with their headers masked in every answer, without contacting the server', async () => {
    const created = await call('POST', '/mcp-servers', {
      name: 'Docs',
      url: mcp.url('/full'),
      headers: { authorization: `Bearer ${token}`, 'x-team': 'blue' },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      object: 'mcp_server',
      name: 'Docs',
      url: mcp.url('/full'),
      headers: { authorization: `…${token.slice(-4)}`, 'x-team': '********' },
    });
    expect(mcp.methods('/full')).toEqual([]);
    const id = created.body.id as string;

    expect((await call('GET', `/mcp-servers/${id}`)).body.headers).toEqual(created.body.headers);
    const listed = await call('GET', '/mcp-servers?limit=100');
    expect(listed.body.data.find((server: { id: string }) => server.id === id)?.headers).toEqual(created.body.headers);

    // A PUT that sends the hints back keeps the stored values; a new value replaces one.
    const renamed = await call('PUT', `/mcp-servers/${id}`, { ...created.body, name: 'Docs 2', headers: { ...created.body.headers, 'x-team': 'green' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Docs 2', headers: { authorization: `…${token.slice(-4)}`, 'x-team': '********' } });
    // Moving a kept header to another origin takes the value itself.
    const moved = await call('PUT', `/mcp-servers/${id}`, { name: 'Docs', url: 'https://mcp.example.com/mcp', headers: created.body.headers });
    expect(moved.status).toBe(400);
    expect(moved.body.error).toMatchObject({ code: 'credentials_required', param: 'headers.authorization' });

    // A PUT without headers keeps them all: the server still gets the token.
    const kept = await call('PUT', `/mcp-servers/${id}`, { name: 'Docs 3', url: mcp.url('/full') });
    expect(kept.body).toMatchObject({ name: 'Docs 3', headers: renamed.body.headers });
    const metadata = await call('GET', `/mcp-servers/${id}/metadata`);
    expect(metadata.status, JSON.stringify(metadata.body)).toBe(200);
    expect(mcp.authorizations('/full').length).toBeGreaterThan(0);
    expect(mcp.authorizations('/full').every((value) => value === `Bearer ${token}`)).toBe(true);

    expect((await call('DELETE', `/mcp-servers/${id}`)).body).toEqual({ id, object: 'mcp_server', deleted: true });
    expect((await call('GET', `/mcp-servers/${id}`)).status).toBe(404);
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ name: '', url: mcp.url('/full') }, 'name'],
      [{ name: 'x', url: 'ftp://example.com/mcp' }, 'url'],
      [{ name: 'x', url: 'not a url' }, 'url'],
      [{ name: 'x', url: 'https://user:pass@example.com/mcp' }, 'url'],
      [{ name: 'x', url: mcp.url('/full'), headers: { authorization: 5 } }, 'headers.authorization'],
      [{ name: 'x', url: mcp.url('/full'), headers: { 'bad header': 'v' } }, 'headers.bad header'],
      [{ name: 'x', url: mcp.url('/full'), headers: { host: 'evil.example' } }, 'headers.host'],
      [{ name: 'x', url: mcp.url('/full'), headers: { authorization: 'a\r\nb' } }, 'headers.authorization'],
      [{ name: 'x', url: mcp.url('/full'), headers: { authorization: '********' } }, 'headers.authorization'],
      [{ name: 'x', url: mcp.url('/full'), transport: 'sse' }, 'transport'],
    ];
    for (const [body, param] of cases) {
      const refused = await call('POST', '/mcp-servers', body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error.param, JSON.stringify(body)).toBe(param);
    }
    expect((await call('GET', '/mcp-servers/mcp_00000000000000000000000000/metadata?refresh=maybe')).body.error.param).toBe('refresh');
  });

  it('answers server info, protocol version, capabilities, every page of tools, resources and prompts', async () => {
    const id = await register('/full', { authorization: `Bearer ${token}` });
    const metadata = await call('GET', `/mcp-servers/${id}/metadata`);
    expect(metadata.status, JSON.stringify(metadata.body)).toBe(200);
    expect(metadata.body).toMatchObject({
      object: 'mcp_server.metadata',
      id,
      server_info: { name: 'test-full', version: '1.2.3' },
      protocol_version: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      capabilities: { tools: {}, resources: {}, prompts: {} },
      instructions: 'Search first, then fetch.',
      cached: false,
    });
    expect(metadata.body.tools.map((tool: { name: string }) => tool.name)).toEqual(['search', 'fetch', 'summarise', 'translate', 'archive']);
    expect(metadata.body.resources).toEqual([expect.objectContaining({ name: 'readme', uri: 'file:///docs/readme.md', mimeType: 'text/markdown' })]);
    expect(metadata.body.prompts).toEqual([expect.objectContaining({ name: 'greet', description: 'Greets someone' })]);
    expect(metadata.body.cache_expires_at - metadata.body.fetched_at).toBe(300);
    // The SDK's handshake, then both pages of tools and the declared lists.
    const calls = mcp.methods('/full');
    expect(calls.slice(-6)).toEqual(['initialize', 'notifications/initialized', 'tools/list', 'tools/list', 'resources/list', 'prompts/list']);

    // Cached: the server is not asked again, until refresh=true.
    const again = await call('GET', `/mcp-servers/${id}/metadata`);
    expect(again.body).toMatchObject({ cached: true, fetched_at: metadata.body.fetched_at, tools: metadata.body.tools });
    expect(mcp.methods('/full')).toHaveLength(calls.length);
    const refreshed = await call('GET', `/mcp-servers/${id}/metadata?refresh=true`);
    expect(refreshed.body.cached).toBe(false);
    expect(mcp.methods('/full').length).toBeGreaterThan(calls.length);
  });

  it('lists only what the server declares, read from JSON answers too', async () => {
    const id = await register('/tools-only');
    const metadata = await call('GET', `/mcp-servers/${id}/metadata`);
    expect(metadata.status, JSON.stringify(metadata.body)).toBe(200);
    expect(metadata.body).toMatchObject({ server_info: { name: 'test-tools-only' }, resources: [], prompts: [] });
    expect(metadata.body.tools).toHaveLength(3);
    expect(mcp.methods('/tools-only')).toEqual(['initialize', 'notifications/initialized', 'tools/list']);
  });

  it('sends the stored headers: a server that requires them refuses the gateway without', async () => {
    const wrong = await register('/full', { authorization: 'Bearer not-the-token-at-all' });
    const refused = await call('GET', `/mcp-servers/${wrong}/metadata`);
    expect(refused.status).toBe(502);
    expect(refused.body.error.code).toBe('mcp_initialize_failed');
    expect(refused.body.error.message).toMatch(/initialize/);
    expect(JSON.stringify(refused.body)).not.toContain('not-the-token-at-all');
  });

  it('names the step that failed in a 502, and never shows the stored headers', async () => {
    const broken = await register('/broken-init', { authorization: `Bearer ${token}` });
    const failed = await call('GET', `/mcp-servers/${broken}/metadata`);
    expect(failed.status).toBe(502);
    expect(failed.body.error).toMatchObject({ code: 'mcp_initialize_failed', type: 'provider_error' });
    expect(failed.body.error.message).toMatch(/failed at the initialize step: .*the backing store is down/);

    // A server that echoes the token back in its refusal: the answer carries no part of it.
    const echo = await register('/echo-401', { authorization: `Bearer ${token}` });
    const echoed = await call('GET', `/mcp-servers/${echo}/metadata`);
    expect(echoed.status).toBe(502);
    expect(echoed.body.error.code).toBe('mcp_initialize_failed');
    expect(echoed.body.error.message).toContain('[redacted]');
    expect(mcp.authorizations('/echo-401')).toContain(`Bearer ${token}`);

    // Nothing listens: the connect step.
    const closed = await register('http://127.0.0.1:9/mcp', { authorization: `Bearer ${token}` });
    const unreachable = await call('GET', `/mcp-servers/${closed}/metadata`);
    expect(unreachable.status).toBe(502);
    expect(unreachable.body.error.code).toBe('mcp_connect_failed');
    expect(unreachable.body.error.message).toMatch(/failed at the connect step: .*ECONNREFUSED/);
  });

  it('ends a server that hangs with a 504 naming the step', async () => {
    const id = await register('/hang', { authorization: `Bearer ${token}` });
    const started = Date.now();
    const hung = await call('GET', `/mcp-servers/${id}/metadata`);
    expect(hung.status).toBe(504);
    expect(hung.body.error).toMatchObject({ code: 'mcp_connect_timeout', type: 'timeout_error' });
    expect(hung.body.error.message).toMatch(/did not finish the connect step within 10 s/);
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 20_000);

  it('connects through the outbound guard: a private address that is not allow-listed is refused', async () => {
    const id = await register('http://10.255.255.1:8080/mcp', { authorization: `Bearer ${token}` });
    const refused = await call('GET', `/mcp-servers/${id}/metadata`);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'mcp_server_not_allowed', param: 'url' });
    expect(refused.body.error.message).toMatch(/not allowed.*GATEWAY_OUTBOUND_ALLOWLIST/);
  });

  it('belong to their workspace: another workspace gets a 404', async () => {
    const id = await register('/full', { authorization: `Bearer ${token}` });
    const workspace = (await call('POST', '/workspaces', { name: `MCP ${Date.now()}` })).body;
    const key = (await call('POST', '/api-keys', { name: 'other', role: 'admin', workspace_id: workspace.id })).body.key as string;
    const before = mcp.methods('/full').length;
    for (const [method, path] of [
      ['GET', `/mcp-servers/${id}`],
      ['GET', `/mcp-servers/${id}/metadata`],
      ['DELETE', `/mcp-servers/${id}`],
    ] as const) {
      const other = await call(method, path, undefined, key);
      expect(other.status, `${method} ${path}`).toBe(404);
      expect(other.body.error.code).toBe('mcp_server_not_found');
    }
    expect((await call('PUT', `/mcp-servers/${id}`, { name: 'x', url: mcp.url('/full') }, key)).status).toBe(404);
    expect((await call('GET', '/mcp-servers', undefined, key)).body.data).toEqual([]);
    expect(mcp.methods('/full')).toHaveLength(before);
    // Members read; only admins write.
    const member = (await call('POST', '/api-keys', { name: 'member', role: 'member' })).body.key as string;
    expect((await call('GET', `/mcp-servers/${id}`, undefined, member)).status).toBe(200);
    expect((await call('DELETE', `/mcp-servers/${id}`, undefined, member)).status).toBe(403);
  });

  it('leaves the stored header values out of every answer and every line the gateway wrote', async () => {
    // Let the log sink write what it holds.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const secrets = [token, 'not-the-token-at-all'];
    for (const secret of secrets) {
      expect(answers.filter((answer) => answer.includes(secret))).toEqual([]);
      expect(gateway.output()).not.toContain(secret);
      expect(gateway.errors()).not.toContain(secret);
    }
    expect(answers.length).toBeGreaterThan(20);
  });
});
