/**
 * MCP servers on loopback built with the SDK's server side (McpServer + the streamable HTTP
 * transport on node:http), one per path, stateless: each POST gets a server and transport of its own.
 *
 * - `/full`: requires `authorization: Bearer <token>`; tools over two pages, a resource and a prompt,
 *   answered as SSE.
 * - `/tools-only`: one page of tools and nothing else declared, answered as JSON.
 * - `/broken-init`: an SDK server whose `initialize` handler fails.
 * - `/echo-401`: refuses every request, echoing the `authorization` header it got.
 * - `/hang`: takes the request and never answers.
 * - `/redirect`: answers 307 to `/full`.
 * - `/huge`: answers `initialize` with 5 MB of instructions.
 * - `/endless`: tools/list always has a next page.
 * - `/stateful`: the tools-only server with sessions (`mcp-session-id`), its GET stream and DELETE;
 *   the HTTP methods it receives are recorded too (`HTTP GET`, `HTTP DELETE`).
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode, InitializeRequestSchema, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

export interface McpTestServer {
  url(path: string): string;
  /** JSON-RPC methods received per path, in order. */
  methods(path: string): string[];
  /** Sessions of `/stateful` not yet ended by a DELETE. */
  openSessions(): number;
  /** `authorization` headers received per path. */
  authorizations(path: string): Array<string | undefined>;
  close(): Promise<void>;
}

const firstPage = ['search', 'fetch', 'summarise'].map((name) => ({
  name,
  description: `The ${name} tool`,
  inputSchema: { type: 'object' as const, properties: {} },
}));
const secondPage = ['translate', 'archive'].map((name) => ({
  name,
  description: `The ${name} tool`,
  inputSchema: { type: 'object' as const, properties: {} },
}));

function fullServer(): McpServer {
  const mcp = new McpServer(
    { name: 'test-full', version: '1.2.3' },
    { capabilities: { tools: {}, resources: {}, prompts: {} }, instructions: 'Search first, then fetch.' },
  );
  mcp.server.setRequestHandler(ListToolsRequestSchema, (request) =>
    request.params?.cursor === 'page-2' ? { tools: secondPage } : { tools: firstPage, nextCursor: 'page-2' },
  );
  mcp.registerResource('readme', 'file:///docs/readme.md', { description: 'The readme', mimeType: 'text/markdown' }, async (uri) => ({
    contents: [{ uri: uri.href, text: '# Readme' }],
  }));
  mcp.registerPrompt('greet', { description: 'Greets someone' }, () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'Hello' } }] }));
  return mcp;
}

function toolsOnlyServer(): McpServer {
  const mcp = new McpServer({ name: 'test-tools-only', version: '0.0.1' }, { capabilities: { tools: {} } });
  mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: firstPage }));
  return mcp;
}

function endlessServer(): McpServer {
  const mcp = new McpServer({ name: 'test-endless', version: '0.0.1' }, { capabilities: { tools: {} } });
  mcp.server.setRequestHandler(ListToolsRequestSchema, (request) => ({ tools: firstPage, nextCursor: `${Number(request.params?.cursor ?? 0) + 1}` }));
  return mcp;
}

function brokenInitServer(): McpServer {
  const mcp = new McpServer({ name: 'test-broken', version: '0.0.1' });
  mcp.server.setRequestHandler(InitializeRequestSchema, () => {
    throw new McpError(ErrorCode.InternalError, 'the backing store is down');
  });
  return mcp;
}

export async function startMcpTestServer(token: string): Promise<McpTestServer> {
  const methods = new Map<string, string[]>();
  const authorizations = new Map<string, Array<string | undefined>>();
  const sockets = new Set<import('node:net').Socket>();
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  const stateful = async (request: IncomingMessage, response: ServerResponse, body: unknown) => {
    const sessionId = request.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (request.method !== 'POST') {
        response.writeHead(400).end();
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, created);
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      await toolsOnlyServer().connect(created);
      transport = created;
    }
    await transport.handleRequest(request, response, body);
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = text ? (JSON.parse(text) as { method?: string } | Array<{ method?: string }>) : undefined;
    for (const message of Array.isArray(body) ? body : body ? [body] : [])
      if (message.method) methods.set(path, [...(methods.get(path) ?? []), message.method]);
    authorizations.set(path, [...(authorizations.get(path) ?? []), request.headers.authorization]);

    if (path === '/hang') return;
    if (path === '/stateful') {
      if (request.method !== 'POST') methods.set(path, [...(methods.get(path) ?? []), `HTTP ${request.method}`]);
      return stateful(request, response, body);
    }
    if (path === '/redirect') {
      response.writeHead(307, { location: '/full' }).end();
      return;
    }
    if (path === '/huge') {
      const id = Array.isArray(body) ? undefined : (body as { id?: unknown } | undefined)?.id;
      const result = { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'huge', version: '1' }, instructions: 'x'.repeat(5 * 1_048_576) };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result }));
      return;
    }
    if (path === '/echo-401') {
      response.writeHead(401, { 'content-type': 'text/plain' }).end(`invalid credentials: ${request.headers.authorization ?? 'none'}`);
      return;
    }
    if (path === '/full' && request.headers.authorization !== `Bearer ${token}`) {
      response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    const make = { '/full': fullServer, '/tools-only': toolsOnlyServer, '/broken-init': brokenInitServer, '/endless': endlessServer }[path];
    if (!make) {
      response.writeHead(404).end();
      return;
    }
    if (request.method !== 'POST') {
      response.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const mcp = make();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: path === '/tools-only' });
    response.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(request, response, body);
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    methods: (path) => methods.get(path) ?? [],
    authorizations: (path) => authorizations.get(path) ?? [],
    openSessions: () => sessions.size,
    close: async () => {
      for (const transport of sessions.values()) await transport.close();
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
