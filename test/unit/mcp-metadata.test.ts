/**
 * The MCP metadata fetch on its own (no store): the outbound guard's verdicts outside local mode,
 * and the bounds on what a server can make the gateway do (redirects, answer sizes).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/core/errors';
import { clearMetadataCache, scrub, serverMetadata } from '../../lib/mcp/metadata';
import type { McpServer } from '../../lib/mcp/servers';
import { startMcpTestServer, type McpTestServer } from '../support/mcp-test-server';

const token = 'unit-test-token-0123456789';
let mcp: McpTestServer;
const saved = { mode: process.env.GATEWAY_MODE, allow: process.env.GATEWAY_OUTBOUND_ALLOWLIST };

const server = (path: string, headers: Record<string, string> = { authorization: `Bearer ${token}` }): McpServer => ({
  id: 'mcp_0000000000000000000000test',
  name: 'test',
  url: mcp.url(path),
  headers,
  created_at: 0,
  updated_at: 0,
});

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

beforeAll(async () => {
  mcp = await startMcpTestServer(token);
});

afterEach(() => {
  clearMetadataCache();
  process.env.GATEWAY_MODE = saved.mode;
  process.env.GATEWAY_OUTBOUND_ALLOWLIST = saved.allow;
  if (saved.mode === undefined) delete process.env.GATEWAY_MODE;
  if (saved.allow === undefined) delete process.env.GATEWAY_OUTBOUND_ALLOWLIST;
});

afterAll(async () => {
  await mcp.close();
});

describe('MCP metadata through the outbound guard', () => {
  it('outside local mode refuses loopback with a 400, and reaches it once the allow-list names it', async () => {
    process.env.GATEWAY_MODE = 'aws';
    delete process.env.GATEWAY_OUTBOUND_ALLOWLIST;
    const refused = await failure(serverMetadata('ws_1', server('/full'), { refresh: true }));
    expect(refused).toMatchObject({ status: 400, code: 'mcp_server_not_allowed', param: 'url' });
    expect(mcp.methods('/full')).toEqual([]);

    process.env.GATEWAY_OUTBOUND_ALLOWLIST = '127.0.0.1';
    const metadata = await serverMetadata('ws_1', server('/full'), { refresh: true });
    expect(metadata.tools).toHaveLength(5);
    expect(mcp.methods('/full')).toContain('tools/list');
  });

  it('follows no redirect: a 502 at the step, saying to register the URL it points to', async () => {
    process.env.GATEWAY_MODE = 'local';
    const before = mcp.methods('/full').length;
    const error = await failure(serverMetadata('ws_1', server('/redirect'), { refresh: true }));
    expect(error).toMatchObject({ status: 502, code: 'mcp_initialize_failed' });
    expect(error.message).toMatch(/307 \(a redirect\).*register the URL it points to/);
    expect(mcp.methods('/redirect')).toEqual(['initialize']);
    expect(mcp.methods('/full')).toHaveLength(before);
  });

  it('reads at most 4 MB of answers', async () => {
    process.env.GATEWAY_MODE = 'local';
    const error = await failure(serverMetadata('ws_1', server('/huge'), { refresh: true }));
    expect(error).toMatchObject({ status: 502, code: 'mcp_initialize_failed' });
    expect(error.message).toMatch(/past 4 MB/);
  });

  it('reads at most 20 pages of a list: a 502 at the list step naming it', async () => {
    process.env.GATEWAY_MODE = 'local';
    const error = await failure(serverMetadata('ws_1', server('/endless'), { refresh: true }));
    expect(error).toMatchObject({ status: 502, code: 'mcp_list_failed' });
    expect(error.message).toMatch(/failed at the list \(tools\/list\) step: the server has more than 20 pages of tools/);
    expect(mcp.methods('/endless').filter((method) => method === 'tools/list')).toHaveLength(20);
  });

  it('keeps an answer per server, URL and headers: a changed header is asked again', async () => {
    process.env.GATEWAY_MODE = 'local';
    const first = await serverMetadata('ws_1', server('/tools-only'), { refresh: false });
    const again = await serverMetadata('ws_1', server('/tools-only'), { refresh: false });
    expect([first.cached, again.cached]).toEqual([false, true]);
    const changed = await serverMetadata('ws_1', server('/tools-only', { 'x-team': 'green' }), { refresh: false });
    expect(changed.cached).toBe(false);
  });
});

describe('MCP metadata from a server with sessions', () => {
  it('follows the session, and ends it with a DELETE once the lists are read', async () => {
    process.env.GATEWAY_MODE = 'local';
    const metadata = await serverMetadata('ws_1', server('/stateful'), { refresh: true });
    expect(metadata.tools).toHaveLength(3);
    const calls = mcp.methods('/stateful');
    expect(calls.filter((call) => !call.startsWith('HTTP '))).toEqual(['initialize', 'notifications/initialized', 'tools/list']);
    expect(calls.at(-1)).toBe('HTTP DELETE');
    expect(mcp.openSessions()).toBe(0);
  });
});

describe('scrub', () => {
  it('removes each stored value, and each long word of one', () => {
    const headers = { authorization: 'Bearer tok_1234567890', 'x-key': 'abc' };
    expect(scrub('got Bearer tok_1234567890 and tok_1234567890 and abc', headers)).toBe('got [redacted] and [redacted] and abc');
  });
});
