import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/core/errors';
import { BlockedAddressError } from '../../lib/outbound/address-guard';
import { HttpClient, openOutbound, sendOutbound, toOutboundError, type OutboundRequest, type OutboundResponse } from '../../lib/outbound/http-client';
import { rejectedGatewayError } from '../support/gateway-error';

// ---------------------------------------------------------------------------------------------
// A scripted raw server: it splits what the client sends into requests (head + content-length
// body) and hands each to the test's handler, which writes whatever bytes it likes.
// ---------------------------------------------------------------------------------------------

const certificate = readFileSync(new URL('../fixtures/tls/localhost.crt', import.meta.url));
const privateKey = readFileSync(new URL('../fixtures/tls/localhost.key', import.meta.url));

interface ServerConnection {
  id: number;
  socket: Socket;
  /** Every byte the client sent on this connection. */
  received: Buffer;
  requests: ServerRequest[];
  /** A request is waiting for its answer (set on arrival, cleared by `reply`). */
  inFlight: boolean;
  closed: boolean;
  whenClosed: Promise<void>;
  /** TLS only: the SNI the client sent. */
  servername?: string | false | null;
}

interface ServerRequest {
  connection: ServerConnection;
  /** 0 for the first request on its connection. */
  index: number;
  method: string;
  target: string;
  /** Header lines in order, as sent. */
  headerLines: string[];
  /** Lower-cased names; the last value when repeated. */
  headers: Record<string, string>;
  body: Buffer;
  /** The request's exact bytes (head and body). */
  raw: Buffer;
  socket: Socket;
}

type Handler = (request: ServerRequest) => void;

class RawServer {
  readonly connections: ServerConnection[] = [];
  readonly requests: ServerRequest[] = [];
  /** Requests that arrived on a connection still waiting for the answer to the previous one. */
  readonly pipelined: ServerRequest[] = [];
  private server!: Server;
  port = 0;

  private constructor(
    private readonly handler: Handler,
    readonly host: string,
    readonly secure: boolean,
  ) {}

  static async start(handler: Handler, options: { tls?: boolean; host?: string } = {}): Promise<RawServer> {
    const raw = new RawServer(handler, options.host ?? '127.0.0.1', options.tls ?? false);
    raw.server = raw.secure
      ? createTlsServer({ cert: certificate, key: privateKey }, (socket) => raw.accept(socket))
      : createNetServer((socket) => raw.accept(socket));
    raw.server.listen(0, raw.host);
    await once(raw.server, 'listening');
    raw.port = (raw.server.address() as AddressInfo).port;
    servers.push(raw);
    return raw;
  }

  url(path = '/', host = this.host): URL {
    return new URL(`${this.secure ? 'https' : 'http'}://${host}:${this.port}${path}`);
  }

  get bytesReceived(): number {
    return this.connections.reduce((sum, connection) => sum + connection.received.length, 0);
  }

  async close(): Promise<void> {
    for (const connection of this.connections) connection.socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    let pending = Buffer.alloc(0);
    const connection: ServerConnection = {
      id: this.connections.length,
      socket,
      received: Buffer.alloc(0),
      requests: [],
      inFlight: false,
      closed: false,
      whenClosed: once(socket, 'close').then(() => {
        connection.closed = true;
      }),
      servername: this.secure ? (socket as TLSSocket).servername : undefined,
    };
    this.connections.push(connection);
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      connection.received = Buffer.concat([connection.received, chunk]);
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = pending.toString('latin1', 0, end);
        const [requestLine, ...headerLines] = head.split('\r\n');
        const headers: Record<string, string> = {};
        for (const line of headerLines) {
          const colon = line.indexOf(':');
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        const length = Number(headers['content-length'] ?? 0);
        if (pending.length < end + 4 + length) return;
        const raw = Buffer.from(pending.subarray(0, end + 4 + length));
        pending = pending.subarray(end + 4 + length);
        const [method, target] = requestLine.split(' ');
        const request: ServerRequest = {
          connection,
          index: connection.requests.length,
          method,
          target,
          headerLines,
          headers,
          body: raw.subarray(end + 4),
          raw,
          socket,
        };
        if (connection.inFlight) this.pipelined.push(request);
        connection.inFlight = true;
        connection.requests.push(request);
        this.requests.push(request);
        this.handler(request);
      }
    });
  }
}

const servers: RawServer[] = [];

/** Writes a response (clearing the connection's in-flight mark first). */
function reply(request: ServerRequest, bytes: string | Buffer): void {
  request.connection.inFlight = false;
  request.socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
}

/** `HTTP/1.1 200 OK` with a content-length body; `extra` is more header lines, each ending in CRLF. */
function ok(body: string | Buffer = '', extra = ''): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\n${extra}content-length: ${bytes.length}\r\n\r\n`, 'latin1'), bytes]);
}

// ---------------------------------------------------------------------------------------------
// Client-side helpers
// ---------------------------------------------------------------------------------------------

const target = 'scripted-upstream';
let client: HttpClient;
const savedMode = process.env.GATEWAY_MODE;
const savedAllowList = process.env.GATEWAY_OUTBOUND_ALLOWLIST;

beforeAll(() => {
  process.env.GATEWAY_MODE = 'local';
  delete process.env.GATEWAY_OUTBOUND_ALLOWLIST;
  client = new HttpClient({ tls: { ca: certificate } });
});

afterEach(async () => {
  process.env.GATEWAY_MODE = 'local';
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

afterAll(() => {
  client.close();
  if (savedMode === undefined) delete process.env.GATEWAY_MODE;
  else process.env.GATEWAY_MODE = savedMode;
  if (savedAllowList === undefined) delete process.env.GATEWAY_OUTBOUND_ALLOWLIST;
  else process.env.GATEWAY_OUTBOUND_ALLOWLIST = savedAllowList;
});

function request(url: URL, init: Partial<Omit<OutboundRequest, 'url'>> = {}): OutboundRequest {
  return { url, method: init.method ?? 'GET', headers: init.headers ?? {}, body: init.body, target: init.target ?? target };
}

async function readBody(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Sends a request with the test's client and reads the whole body. */
async function fetchText(
  url: URL,
  init: Partial<Omit<OutboundRequest, 'url'>> = {},
  using: HttpClient = client,
): Promise<{ response: OutboundResponse; text: string }> {
  const response = await using.open(request(url, init)).response;
  const text = (await readBody(response.body)).toString();
  // Let the client take the connection back before the test's next request.
  await new Promise((resolve) => setImmediate(resolve));
  return { response, text };
}

/** The error a body emits (fails the test if it ends normally). */
async function bodyError(body: Readable): Promise<Error> {
  try {
    await readBody(body);
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the response body to fail, but it ended normally');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `body` with the test runner's uncaught-exception handlers set aside; returns what would have crashed the process. */
async function collectUncaught(body: () => Promise<void>): Promise<unknown[]> {
  const caught: unknown[] = [];
  const saved = process.listeners('uncaughtException');
  const listener = (error: unknown) => caught.push(error);
  process.removeAllListeners('uncaughtException');
  process.on('uncaughtException', listener);
  try {
    await body();
    await sleep(20);
  } finally {
    process.removeListener('uncaughtException', listener);
    for (const handler of saved) process.on('uncaughtException', handler);
  }
  return caught;
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

// ---------------------------------------------------------------------------------------------
// Request bytes
// ---------------------------------------------------------------------------------------------

describe('HttpClient request bytes', () => {
  const utf8Body = '{"content":"héllo wörld — ✓ 🚀 日本語"}';

  it('frames a POST with a multi-byte UTF-8 string body: request line, host with port, content-length in bytes, caller headers, body', async () => {
    const server = await RawServer.start((req) => reply(req, ok('done')));
    const url = server.url('/v1/chat/completions?api-version=2024-10-21&q=é');
    const { response, text } = await fetchText(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'X-Trace-Id': 'abc 123', 'content-length': '999' },
      body: utf8Body,
    });
    expect(response.status).toBe(200);
    expect(text).toBe('done');
    const [received] = server.requests;
    expect(received.method).toBe('POST');
    expect(received.target).toBe('/v1/chat/completions?api-version=2024-10-21&q=%C3%A9');
    expect(received.raw.toString('latin1').startsWith('POST /v1/chat/completions?api-version=2024-10-21&q=%C3%A9 HTTP/1.1\r\n')).toBe(true);
    const byteLength = Buffer.byteLength(utf8Body);
    expect(byteLength).toBeGreaterThan(utf8Body.length);
    expect([...received.headerLines].sort()).toEqual(
      [`host: 127.0.0.1:${server.port}`, `content-length: ${byteLength}`, 'Content-Type: application/json; charset=utf-8', 'X-Trace-Id: abc 123'].sort(),
    );
    expect(received.body.equals(Buffer.from(utf8Body, 'utf8'))).toBe(true);
    // Nothing else came on the connection.
    expect(server.connections[0].received.equals(received.raw)).toBe(true);
  });

  it('writes host, then content-length, then the caller headers as given, exactly', async () => {
    const server = await RawServer.start((req) => reply(req, ok('done')));
    const url = server.url('/v1/chat/completions?api-version=2024-10-21&q=é');
    await fetchText(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'X-Trace-Id': 'abc 123', 'content-length': '999' },
      body: utf8Body,
    });
    const expected = Buffer.concat([
      Buffer.from(
        'POST /v1/chat/completions?api-version=2024-10-21&q=%C3%A9 HTTP/1.1\r\n' +
          `host: 127.0.0.1:${server.port}\r\n` +
          `content-length: ${Buffer.byteLength(utf8Body)}\r\n` +
          'Content-Type: application/json; charset=utf-8\r\n' +
          'X-Trace-Id: abc 123\r\n' +
          '\r\n',
        'latin1',
      ),
      Buffer.from(utf8Body, 'utf8'),
    ]);
    expect(server.connections[0].received.toString('latin1')).toBe(expected.toString('latin1'));
    expect(server.connections[0].received.equals(expected)).toBe(true);
  });

  it('sends a GET with no body and no content-length, path "/" for an empty path, the query kept', async () => {
    const server = await RawServer.start((req) => reply(req, ok('x')));
    await fetchText(server.url('/models/list'), { headers: { accept: 'application/json', authorization: 'Bearer sk-test' } });
    await fetchText(new URL(`http://127.0.0.1:${server.port}?a=1&b=two%20words`));
    await fetchText(new URL(`http://127.0.0.1:${server.port}`));
    expect(server.requests.map((req) => req.raw.toString('latin1'))).toEqual([
      `GET /models/list HTTP/1.1\r\nhost: 127.0.0.1:${server.port}\r\naccept: application/json\r\nauthorization: Bearer sk-test\r\n\r\n`,
      `GET /?a=1&b=two%20words HTTP/1.1\r\nhost: 127.0.0.1:${server.port}\r\n\r\n`,
      `GET / HTTP/1.1\r\nhost: 127.0.0.1:${server.port}\r\n\r\n`,
    ]);
  });

  it('sends a binary Buffer body byte for byte, and an empty string body with content-length 0', async () => {
    const server = await RawServer.start((req) => reply(req, ok('x')));
    const binary = Buffer.from(Array.from({ length: 512 }, (_, index) => (index * 13) & 0xff));
    await fetchText(server.url('/upload'), { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: binary });
    await fetchText(server.url('/empty'), { method: 'POST', body: '' });
    const [put, empty] = server.requests;
    expect(put.headers['content-length']).toBe('512');
    expect(put.body.equals(binary)).toBe(true);
    expect(put.headerLines.filter((line) => /^content-length:/i.test(line))).toEqual(['content-length: 512']);
    expect(empty.headers['content-length']).toBe('0');
    expect(empty.body.length).toBe(0);
    expect(empty.raw.toString('latin1').endsWith('\r\n\r\n')).toBe(true);
  });

  it('sends a host header with the hostname as written (localhost) and the port', async () => {
    const server = await RawServer.start((req) => reply(req, ok('x')));
    await fetchText(server.url('/h', 'localhost'));
    expect(server.requests[0].headers.host).toBe(`localhost:${server.port}`);
  });

  it('sends a large body (4 MiB) whole', async () => {
    const server = await RawServer.start((req) => reply(req, ok(String(req.body.length))));
    const big = randomBytes(4 * 1024 * 1024);
    const { text } = await fetchText(server.url('/big'), { method: 'POST', body: big });
    expect(text).toBe(String(big.length));
    expect(server.requests[0].body.equals(big)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Header validation
// ---------------------------------------------------------------------------------------------

describe('HttpClient header validation', () => {
  const bad: [string, Record<string, string>][] = [
    ['CRLF in a value', { 'x-note': 'a\r\nx-injected: 1' }],
    ['LF in a value', { 'x-note': 'a\nx-injected: 1' }],
    ['CR in a value', { 'x-note': 'a\rb' }],
    ['NUL in a value', { 'x-note': 'a\u0000b' }],
    ['CRLF CRLF smuggling a second request', { 'x-note': 'a\r\n\r\nGET /admin HTTP/1.1\r\nhost: internal' }],
    ['a space in a name', { 'x bad': '1' }],
    ['a colon in a name', { 'x:bad': '1' }],
    ['an empty name', { '': '1' }],
    ['CRLF in a name', { 'x-a\r\nx-injected': '1' }],
    ['a parenthesis in a name', { 'x(bad)': '1' }],
    ['a non-ASCII name', { 'x-é': '1' }],
  ];

  for (const [name, headers] of bad) {
    it(`refuses ${name} with a 400 and sends nothing`, async () => {
      const server = await RawServer.start((req) => reply(req, ok('should not happen')));
      const error = await rejectedGatewayError(
        client.open(request(server.url('/x'), { method: 'POST', headers: { 'content-type': 'text/plain', ...headers }, body: 'hi' })).response,
      );
      expect(error.status).toBe(400);
      expect(error.code).toBe('invalid_request_header');
      await sleep(50);
      expect(server.bytesReceived).toBe(0);
      expect(server.requests.length).toBe(0);
      // The server was reachable all along.
      const { text } = await fetchText(server.url('/ok'), { headers: { 'x-fine': 'tab\tand spaces  ' } });
      expect(text).toBe('should not happen');
      expect(server.requests.map((req) => req.target)).toEqual(['/ok']);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------------

describe('HttpClient responses', () => {
  it('returns status, folded headers and a de-chunked body (extensions and trailers dropped)', async () => {
    const server = await RawServer.start((req) =>
      reply(
        req,
        'HTTP/1.1 201 Created\r\n' +
          'Content-Type: application/json\r\n' +
          'content-type: text/html\r\n' +
          'Set-Cookie: a=1; Path=/\r\n' +
          'X-Multi: one\r\n' +
          'set-cookie: b=2\r\n' +
          'x-multi: two\r\n' +
          'Transfer-Encoding: chunked\r\n' +
          'ETag: "first"\r\n' +
          'etag: "second"\r\n' +
          '\r\n' +
          '5;ext=1\r\nhello\r\n' +
          '1\r\n \r\n' +
          '5\r\nworld\r\n' +
          '0\r\nX-Trailer: dropped\r\n\r\n',
      ),
    );
    const { response, text } = await fetchText(server.url('/chunked'));
    expect(response.status).toBe(201);
    expect(response.headers).toEqual({
      'content-type': 'application/json',
      'set-cookie': ['a=1; Path=/', 'b=2'],
      'x-multi': 'one, two',
      'transfer-encoding': 'chunked',
      etag: '"first"',
    });
    expect(text).toBe('hello world');
  });

  it('skips 100 Continue and 103 Early Hints and returns the final response', async () => {
    const server = await RawServer.start((req) =>
      reply(
        req,
        'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nfinal',
      ),
    );
    const { response, text } = await fetchText(server.url('/hints'));
    expect(response.status).toBe(200);
    expect(response.headers).toEqual({ 'content-length': '5' });
    expect(text).toBe('final');
  });

  it('returns 1xx-split answers written in separate packets', async () => {
    const server = await RawServer.start((req) => {
      req.connection.inFlight = false;
      req.socket.write('HTTP/1.1 100 Continue\r\n\r\n');
      setTimeout(() => req.socket.write('HTTP/1.1 200 OK\r\ncontent-le'), 20);
      setTimeout(() => req.socket.write('ngth: 4\r\n\r\nab'), 40);
      setTimeout(() => req.socket.write('cd'), 60);
    });
    const { response, text } = await fetchText(server.url('/slow'));
    expect(response.status).toBe(200);
    expect(text).toBe('abcd');
  });

  it('leaves out a header whose value could not be sent on (NUL, CR, control characters), and reuses the connection', async () => {
    const server = await RawServer.start((req) =>
      reply(req, ok(`answer ${req.index}`, 'x-nul: a\x00b\r\nx-cr: a\rb\r\nx-ctl: \x1b[0m\r\nconstructor: kept\r\nx-good: yes\r\n')),
    );
    for (let index = 0; index < 2; index++) {
      const { response, text } = await fetchText(server.url(`/bad-header/${index}`));
      expect(text).toBe(`answer ${index}`);
      expect({ ...response.headers }).toEqual({ constructor: 'kept', 'x-good': 'yes', 'content-length': String(`answer ${index}`.length) });
    }
    expect(server.connections.length).toBe(1);
  });

  it('reads no body for HEAD (content-length ignored) and reuses the connection', async () => {
    const server = await RawServer.start((req) =>
      reply(req, req.method === 'HEAD' ? 'HTTP/1.1 200 OK\r\ncontent-length: 50\r\ncontent-type: text/plain\r\n\r\n' : ok('after head')),
    );
    const head = await fetchText(server.url('/file'), { method: 'HEAD' });
    expect(head.response.status).toBe(200);
    expect(head.response.headers['content-length']).toBe('50');
    expect(head.text).toBe('');
    const next = await fetchText(server.url('/file'));
    expect(next.text).toBe('after head');
    expect(server.connections.length).toBe(1);
    expect(server.requests.map((req) => `${req.connection.id}:${req.method}`)).toEqual(['0:HEAD', '0:GET']);
  });

  it('reads no body for 204 and 304 even with a content-length, and reuses the connection', async () => {
    const answers = [
      'HTTP/1.1 204 No Content\r\ncontent-length: 7\r\n\r\n',
      'HTTP/1.1 304 Not Modified\r\netag: "v1"\r\ncontent-length: 3\r\n\r\n',
      ok('last').toString('latin1'),
    ];
    const server = await RawServer.start((req) => reply(req, answers[req.index]));
    const noContent = await fetchText(server.url('/a'), { method: 'DELETE' });
    const notModified = await fetchText(server.url('/b'), { headers: { 'if-none-match': '"v1"' } });
    const last = await fetchText(server.url('/c'));
    expect([noContent.response.status, noContent.text]).toEqual([204, '']);
    expect([notModified.response.status, notModified.text, notModified.response.headers.etag]).toEqual([304, '', '"v1"']);
    expect([last.response.status, last.text]).toEqual([200, 'last']);
    expect(server.connections.length).toBe(1);
  });

  it('reads a close-delimited body to the end of the connection', async () => {
    const server = await RawServer.start((req) => {
      reply(req, 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: 1\n\n');
      setTimeout(() => req.socket.write('data: 2\n\n'), 20);
      setTimeout(() => req.socket.end('data: [DONE]\n\n'), 40);
    });
    const { response, text } = await fetchText(server.url('/stream'));
    expect(response.status).toBe(200);
    expect(text).toBe('data: 1\n\ndata: 2\n\ndata: [DONE]\n\n');
  });

  it('streams body chunks as they arrive, before the response is complete', async () => {
    let second: (() => void) | undefined;
    const server = await RawServer.start((req) => {
      reply(req, 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n6\r\nfirst \r\n');
      second = () => req.socket.write('6\r\nsecond\r\n0\r\n\r\n');
    });
    const response = await client.open(request(server.url('/sse'))).response;
    const [firstChunk] = (await once(response.body, 'data')) as [Buffer];
    expect(firstChunk.toString()).toBe('first ');
    second!();
    expect((await readBody(response.body)).toString()).toBe('second');
  });

  it('gives a real Readable: readableEnded after the end, then close', async () => {
    const server = await RawServer.start((req) => reply(req, ok('streamed body')));
    const response = await client.open(request(server.url('/r'))).response;
    const closed = once(response.body, 'close');
    expect(response.body.readableEnded).toBe(false);
    expect((await readBody(response.body)).toString()).toBe('streamed body');
    expect(response.body.readableEnded).toBe(true);
    await closed;
    expect(response.body.destroyed).toBe(true);
  });

  it('gives an empty body that still ends and closes (204)', async () => {
    const server = await RawServer.start((req) => reply(req, 'HTTP/1.1 204 No Content\r\n\r\n'));
    const response = await client.open(request(server.url('/empty'))).response;
    const closed = once(response.body, 'close');
    const ended = once(response.body, 'end');
    response.body.resume();
    await ended;
    await closed;
    expect(response.body.readableEnded).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Keep-alive pool
// ---------------------------------------------------------------------------------------------

describe('HttpClient keep-alive pool', () => {
  it('reuses one connection for sequential requests', async () => {
    const server = await RawServer.start((req) => reply(req, ok(`answer ${req.index}`)));
    for (let index = 0; index < 5; index++) {
      const { text } = await fetchText(server.url(`/seq/${index}`), index % 2 ? { method: 'POST', body: `body ${index}` } : {});
      expect(text).toBe(`answer ${index}`);
    }
    expect(server.connections.length).toBe(1);
    expect(server.requests.map((req) => req.target)).toEqual(['/seq/0', '/seq/1', '/seq/2', '/seq/3', '/seq/4']);
  });

  it('keeps one pool per origin (protocol, host, port)', async () => {
    const server = await RawServer.start((req) => reply(req, ok(req.headers.host)));
    const other = await RawServer.start((req) => reply(req, ok('other')));
    await fetchText(server.url('/1'));
    await fetchText(server.url('/2', 'localhost'));
    await fetchText(other.url('/3'));
    await fetchText(server.url('/4'));
    await fetchText(server.url('/5', 'localhost'));
    await fetchText(other.url('/6'));
    expect(server.connections.length).toBe(2);
    expect(other.connections.length).toBe(1);
    expect(server.requests.map((req) => `${req.target}@${req.connection.id}`)).toEqual(['/1@0', '/2@1', '/4@0', '/5@1']);
  });

  it('reuses the most recently used idle connection first', async () => {
    const waiting: ServerRequest[] = [];
    const server = await RawServer.start((req) => {
      if (req.target.startsWith('/hold')) waiting.push(req);
      else reply(req, ok(`conn ${req.connection.id}`));
    });
    const first = client.open(request(server.url('/hold/a')));
    const second = client.open(request(server.url('/hold/b')));
    await waitFor(() => waiting.length === 2, 'two held requests');
    expect(server.connections.length).toBe(2);
    const [early, late] = waiting;
    reply(early, ok('early'));
    expect((await readBody((await (early.target === '/hold/a' ? first : second).response).body)).toString()).toBe('early');
    await sleep(20);
    reply(late, ok('late'));
    expect((await readBody((await (late.target === '/hold/a' ? first : second).response).body)).toString()).toBe('late');
    await sleep(20);
    const { text } = await fetchText(server.url('/next'));
    expect(text).toBe(`conn ${late.connection.id}`);
    const again = await fetchText(server.url('/again'));
    expect(again.text).toBe(`conn ${late.connection.id}`);
    expect(server.connections.length).toBe(2);
  });

  it('does not reuse a connection after connection: close, even if the server keeps it open, and closes it', async () => {
    const server = await RawServer.start((req) =>
      reply(req, req.index === 0 && req.connection.id === 0 ? ok('closing', 'connection: close\r\n') : ok('fresh')),
    );
    expect((await fetchText(server.url('/1'))).text).toBe('closing');
    expect((await fetchText(server.url('/2'))).text).toBe('fresh');
    expect(server.connections.length).toBe(2);
    expect(server.connections[0].requests.length).toBe(1);
    await waitFor(() => server.connections[0].closed, 'the client to close the first connection');
  });

  it('does not reuse a connection after an HTTP/1.0 response without keep-alive', async () => {
    const server = await RawServer.start((req) => reply(req, 'HTTP/1.0 200 OK\r\ncontent-length: 3\r\n\r\nold'));
    expect((await fetchText(server.url('/1'))).text).toBe('old');
    expect((await fetchText(server.url('/2'))).text).toBe('old');
    expect(server.connections.length).toBe(2);
    await waitFor(() => server.connections[0].closed, 'the client to close the first connection');
  });

  it('reuses a connection after an HTTP/1.0 response with connection: keep-alive', async () => {
    const server = await RawServer.start((req) => reply(req, 'HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 3\r\n\r\nold'));
    await fetchText(server.url('/1'));
    await fetchText(server.url('/2'));
    expect(server.connections.length).toBe(1);
  });

  it('does not reuse a connection after a close-delimited body', async () => {
    const server = await RawServer.start((req) => {
      if (req.connection.id === 0) {
        req.connection.inFlight = false;
        req.socket.end('HTTP/1.1 200 OK\r\n\r\nuntil close');
      } else reply(req, ok('second'));
    });
    expect((await fetchText(server.url('/1'))).text).toBe('until close');
    expect((await fetchText(server.url('/2'))).text).toBe('second');
    expect(server.connections.length).toBe(2);
  });

  it('does not reuse a connection that sent stray bytes after the response (same packet)', async () => {
    const server = await RawServer.start((req) => {
      if (req.connection.id > 0) reply(req, ok('second, on a new connection'));
      else if (req.index === 0) reply(req, Buffer.concat([ok('first'), Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nstray')]));
      else reply(req, ok('second, on the connection that sent stray bytes'));
    });
    expect((await fetchText(server.url('/1'))).text).toBe('first');
    expect((await fetchText(server.url('/2'))).text).toBe('second, on a new connection');
    expect(server.connections.length).toBe(2);
    expect(server.connections[0].requests.length).toBe(1);
  });

  it('does not reuse a connection that sent stray bytes after the response (later packet)', async () => {
    const server = await RawServer.start((req) => {
      reply(req, req.connection.id === 0 ? ok('first') : ok('second'));
      if (req.connection.id === 0) setTimeout(() => req.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nstray'), 30);
    });
    expect((await fetchText(server.url('/1'))).text).toBe('first');
    await sleep(100);
    expect((await fetchText(server.url('/2'))).text).toBe('second');
    expect(server.connections.length).toBe(2);
    expect(server.connections[0].requests.length).toBe(1);
  });

  it('does not reuse a connection after a malformed response', async () => {
    const server = await RawServer.start((req) =>
      reply(req, req.connection.id === 0 ? 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nabc' : ok('fine')),
    );
    const error = await rejectedGatewayError(client.open(request(server.url('/1'))).response);
    expect(error.status).toBe(502);
    expect((await fetchText(server.url('/2'))).text).toBe('fine');
    expect(server.connections.length).toBe(2);
    await waitFor(() => server.connections[0].closed, 'the client to close the broken connection');
  });

  it('drops an idle connection the server closes (FIN) and opens a new one without error', async () => {
    const server = await RawServer.start((req) => {
      reply(req, ok(`conn ${req.connection.id}`));
      if (req.connection.id === 0) setTimeout(() => req.socket.end(), 20);
    });
    expect((await fetchText(server.url('/1'))).text).toBe('conn 0');
    await waitFor(() => server.connections[0].closed, 'the server to close the idle connection');
    await sleep(50);
    expect((await fetchText(server.url('/2'))).text).toBe('conn 1');
    expect(server.connections.length).toBe(2);
    expect(server.connections[0].requests.length).toBe(1);
  });

  it('drops an idle connection the server resets (RST) and opens a new one without error', async () => {
    const server = await RawServer.start((req) => {
      reply(req, ok(`conn ${req.connection.id}`));
      if (req.connection.id === 0) setTimeout(() => req.socket.resetAndDestroy(), 20);
    });
    expect((await fetchText(server.url('/1'))).text).toBe('conn 0');
    await waitFor(() => server.connections[0].closed, 'the server to reset the idle connection');
    await sleep(50);
    expect((await fetchText(server.url('/2'))).text).toBe('conn 1');
    expect(server.connections.length).toBe(2);
  });

  it('keeps using a connection within its keep-alive timeout', async () => {
    const server = await RawServer.start((req) => reply(req, ok('x', 'keep-alive: timeout=5, max=100\r\n')));
    await fetchText(server.url('/1'));
    await sleep(300);
    await fetchText(server.url('/2'));
    expect(server.connections.length).toBe(1);
  });

  it('retires an idle connection before the keep-alive timeout the server announced (timeout=1)', async () => {
    // The server never closes the connection itself: only the client's timer can retire it.
    const server = await RawServer.start((req) => reply(req, ok(`conn ${req.connection.id}`, 'Keep-Alive: timeout=1\r\n')));
    expect((await fetchText(server.url('/1'))).text).toBe('conn 0');
    await sleep(1_050);
    expect((await fetchText(server.url('/2'))).text).toBe('conn 1');
    expect(server.connections.length).toBe(2);
    expect(server.connections[0].requests.length).toBe(1);
    await waitFor(() => server.connections[0].closed, 'the client to close the retired connection', 1_000);
  });

  it('answers 20 parallel requests correctly, one request at a time per connection, then reuses the pool', async () => {
    const server = await RawServer.start((req) => {
      const delay = (req.target.length * 7) % 30;
      setTimeout(() => reply(req, ok(`answer for ${req.target} (${req.body.toString()})`, `x-path: ${req.target}\r\n`)), delay);
    });
    const round = async (label: string) =>
      Promise.all(
        Array.from({ length: 20 }, async (_, index) => {
          const path = `/${label}/${index}`;
          const response = await client.open(request(server.url(path), { method: 'POST', body: `body ${label} ${index}` })).response;
          const text = (await readBody(response.body)).toString();
          expect(response.headers['x-path']).toBe(path);
          expect(text).toBe(`answer for ${path} (body ${label} ${index})`);
          return text;
        }),
      );
    expect((await round('one')).length).toBe(20);
    expect(server.pipelined).toEqual([]);
    expect(server.requests.length).toBe(20);
    const afterFirst = server.connections.length;
    expect(afterFirst).toBeGreaterThanOrEqual(1);
    expect(afterFirst).toBeLessThanOrEqual(20);
    await sleep(20);
    expect((await round('two')).length).toBe(20);
    expect(server.pipelined).toEqual([]);
    expect(server.connections.length).toBe(afterFirst);
    await sleep(20);
    for (let index = 0; index < 3; index++) await fetchText(server.url(`/three/${index}`), { method: 'POST', body: 'x' });
    expect(server.connections.length).toBe(afterFirst);
    expect(server.requests.length).toBe(43);
  });

  it('close() ends every pooled connection', async () => {
    const own = new HttpClient();
    const server = await RawServer.start((req) => reply(req, ok('x')));
    await Promise.all([fetchText(server.url('/1'), {}, own), fetchText(server.url('/2'), {}, own)]);
    expect(server.connections.length).toBeGreaterThanOrEqual(1);
    own.close();
    await waitFor(() => server.connections.every((connection) => connection.closed), 'every pooled connection to close');
  });
});

// ---------------------------------------------------------------------------------------------
// Stale connections
// ---------------------------------------------------------------------------------------------

describe('HttpClient stale connection retry', () => {
  it('retries once on a new connection when a reused connection closes before answering (FIN)', async () => {
    const server = await RawServer.start((req) => {
      if (req.connection.id === 0 && req.index === 1) req.socket.destroy();
      else reply(req, ok(`conn ${req.connection.id} request ${req.index}`));
    });
    expect((await fetchText(server.url('/first'))).text).toBe('conn 0 request 0');
    const { response, text } = await fetchText(server.url('/second'));
    expect(response.status).toBe(200);
    expect(text).toBe('conn 1 request 0');
    expect(server.connections.length).toBe(2);
    expect(server.requests.map((req) => `${req.target}@${req.connection.id}`)).toEqual(['/first@0', '/second@0', '/second@1']);
    // The retry was sent byte for byte again.
    expect(server.requests[2].raw.equals(server.requests[1].raw)).toBe(true);
  });

  it('retries once when a reused connection is reset (RST) before answering', async () => {
    const server = await RawServer.start((req) => {
      if (req.connection.id === 0 && req.index === 1) req.socket.resetAndDestroy();
      else reply(req, ok(`conn ${req.connection.id}`));
    });
    await fetchText(server.url('/first'));
    expect((await fetchText(server.url('/second'))).text).toBe('conn 1');
    expect(server.connections.length).toBe(2);
  });

  it('never sends a POST twice: a reused connection closed before answering rejects with 502', async () => {
    // The provider may have started the work; a second model call would be billed twice.
    const server = await RawServer.start((req) => {
      if (req.connection.id === 0 && req.index === 1) req.socket.destroy();
      else reply(req, ok(`got ${req.body.toString()}`));
    });
    await fetchText(server.url('/first'), { method: 'POST', body: 'one' });
    const error = await rejectedGatewayError(
      client.open(request(server.url('/second'), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'twö' })).response,
    );
    expect(error.status).toBe(502);
    expect(error.message).toContain(target);
    await sleep(100);
    expect(server.connections.length).toBe(1);
    expect(server.requests.map((req) => req.target)).toEqual(['/first', '/second']);
  });

  it('retries only once: a retry that fails the same way rejects with 502', async () => {
    const server = await RawServer.start((req) => {
      if (req.connection.id === 0 && req.index === 0) reply(req, ok('first'));
      else req.socket.destroy();
    });
    await fetchText(server.url('/first'));
    const error = await rejectedGatewayError(client.open(request(server.url('/second'))).response);
    expect(error.status).toBe(502);
    expect(error.message).toContain(target);
    await sleep(100);
    expect(server.connections.length).toBe(2);
    expect(server.requests.map((req) => `${req.target}@${req.connection.id}`)).toEqual(['/first@0', '/second@0', '/second@1']);
  });

  it('does not retry on a fresh connection: closed before answering rejects with 502 naming the target', async () => {
    const server = await RawServer.start((req) => req.socket.destroy());
    const error = await rejectedGatewayError(client.open(request(server.url('/only'))).response);
    expect(error.status).toBe(502);
    expect(error.code).toBe('provider_unreachable');
    expect(error.message).toContain(target);
    await sleep(100);
    expect(server.connections.length).toBe(1);
    expect(server.requests.length).toBe(1);
  });

  it('does not retry on a fresh connection that is reset before answering', async () => {
    const server = await RawServer.start((req) => req.socket.resetAndDestroy());
    const error = await rejectedGatewayError(client.open(request(server.url('/only'))).response);
    expect(error.status).toBe(502);
    expect(error.message).toContain(target);
    await sleep(100);
    expect(server.connections.length).toBe(1);
  });

  it('does not retry once part of the response arrived', async () => {
    const server = await RawServer.start((req) => {
      if (req.index === 0) reply(req, ok('first'));
      else {
        req.socket.write('HTTP/1.1 200 OK\r\ncontent-');
        setTimeout(() => req.socket.destroy(), 20);
      }
    });
    await fetchText(server.url('/first'));
    const error = await rejectedGatewayError(client.open(request(server.url('/second'))).response);
    expect(error.status).toBe(502);
    expect(error.message.length).toBeGreaterThan(0);
    await sleep(100);
    expect(server.connections.length).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------
// Failures
// ---------------------------------------------------------------------------------------------

describe('HttpClient failures', () => {
  it('rejects a refused connection with 502 provider_unreachable naming the target', async () => {
    const probe = createNetServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const error = await rejectedGatewayError(client.open(request(new URL(`http://127.0.0.1:${port}/v1/x`), { target: 'my-provider' })).response);
    expect(error.status).toBe(502);
    expect(error.code).toBe('provider_unreachable');
    expect(error.message).toContain('my-provider');
  });

  it('refuses loopback addresses on AWS (SSRF guard) with 400 custom_host_not_allowed, by IP and by name, without connecting', async () => {
    const server = await RawServer.start((req) => reply(req, ok('reached')));
    process.env.GATEWAY_MODE = 'aws';
    try {
      for (const url of [server.url('/ip'), server.url('/name', 'localhost')]) {
        const error = await rejectedGatewayError(client.open(request(url)).response);
        expect(error.status, url.href).toBe(400);
        expect(error.code, url.href).toBe('custom_host_not_allowed');
      }
      const viaSend = await rejectedGatewayError(sendOutbound(request(server.url('/send'))));
      expect(viaSend.status).toBe(400);
    } finally {
      process.env.GATEWAY_MODE = 'local';
    }
    await sleep(50);
    expect(server.connections.length).toBe(0);
    expect((await fetchText(server.url('/local'))).text).toBe('reached');
  });

  it('refuses on AWS a loopback origin that has an idle pooled connection from local mode (IP literal)', async () => {
    const server = await RawServer.start((req) => reply(req, ok('reached')));
    await fetchText(server.url('/warm'));
    process.env.GATEWAY_MODE = 'aws';
    try {
      const error = await rejectedGatewayError(client.open(request(server.url('/ip'))).response);
      expect(error.status).toBe(400);
      expect(error.code).toBe('custom_host_not_allowed');
    } finally {
      process.env.GATEWAY_MODE = 'local';
    }
    expect(server.requests.length).toBe(1);
  });

  for (const url of ['ftp://127.0.0.1/file', 'file:///etc/passwd', 'ws://127.0.0.1:1/socket']) {
    it(`rejects ${url.split(':')[0]}: URLs with 502 naming the protocol`, async () => {
      const error = await rejectedGatewayError(client.open(request(new URL(url))).response);
      expect(error.status).toBe(502);
      expect(error.message).toContain(new URL(url).protocol.replace(':', ''));
    });
  }

  const malformedHeads: [string, string][] = [
    ['a garbage status line', 'HTTP/1.1 OK 200\r\ncontent-length: 0\r\n\r\n'],
    ['something that is not HTTP', 'SSH-2.0-OpenSSH_9.6\r\n\r\n'],
    ['conflicting content-length headers', 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nabc'],
    ['a non-numeric content-length', 'HTTP/1.1 200 OK\r\ncontent-length: lots\r\n\r\nabc'],
    ['a header line without a colon', 'HTTP/1.1 200 OK\r\nbroken header\r\n\r\n'],
    ['a head larger than 64 KiB', `HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(70 * 1024)}\r\ncontent-length: 0\r\n\r\n`],
  ];
  for (const [name, raw] of malformedHeads) {
    it(`rejects ${name} with 502`, async () => {
      const server = await RawServer.start((req) => reply(req, raw));
      const error = await rejectedGatewayError(client.open(request(server.url('/bad'))).response);
      expect(error.status).toBe(502);
      expect(error.message.length).toBeGreaterThan(0);
    });
  }

  it('rejects with 502 when the server closes after half a head', async () => {
    const server = await RawServer.start((req) => {
      req.socket.write('HTTP/1.1 200 OK\r\ncontent-len');
      setTimeout(() => req.socket.end(), 20);
    });
    const error = await rejectedGatewayError(client.open(request(server.url('/half'))).response);
    expect(error.status).toBe(502);
  });

  it('fails the body when a chunk size is malformed after the head', async () => {
    const server = await RawServer.start((req) => {
      reply(req, 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n');
      setTimeout(() => req.socket.write('zz\r\nnope\r\n0\r\n\r\n'), 30);
    });
    const response = await client.open(request(server.url('/chunks'))).response;
    expect(response.status).toBe(200);
    const error = await bodyError(response.body);
    expect(error).toBeInstanceOf(Error);
    await waitFor(() => server.connections[0].closed, 'the client to close the broken connection');
  });

  it('fails the body when the server destroys the socket mid content-length body', async () => {
    const server = await RawServer.start((req) => {
      req.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n0123456789');
      setTimeout(() => req.socket.destroy(), 30);
    });
    const response = await client.open(request(server.url('/cut'))).response;
    expect(response.status).toBe(200);
    const chunks: Buffer[] = [];
    response.body.on('data', (chunk: Buffer) => chunks.push(chunk));
    const [error] = (await once(response.body, 'error').catch((caught) => [caught])) as [Error];
    expect(error).toBeInstanceOf(Error);
    expect(Buffer.concat(chunks).toString()).toBe('0123456789');
    expect(response.body.readableEnded).toBe(false);
  });

  it('fails the body when the server destroys the socket mid chunked body', async () => {
    const server = await RawServer.start((req) => {
      req.socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n');
      setTimeout(() => req.socket.destroy(), 30);
    });
    const response = await client.open(request(server.url('/cut'))).response;
    expect(response.status).toBe(200);
    expect(await bodyError(response.body)).toBeInstanceOf(Error);
  });

  it('a connection failure on one request does not disturb the next (new connection)', async () => {
    const server = await RawServer.start((req) => {
      if (req.connection.id === 0) {
        req.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort');
        setTimeout(() => req.socket.destroy(), 20);
      } else reply(req, ok('recovered'));
    });
    const response = await client.open(request(server.url('/a'))).response;
    await bodyError(response.body);
    expect((await fetchText(server.url('/b'))).text).toBe('recovered');
    expect(server.connections.length).toBe(2);
  });
});

describe('HttpClient body errors nobody listens for yet', () => {
  // node:http's IncomingMessage emits 'error' only when someone listens; a body that fails between
  // `await call.response` and the caller's first read must not take the process down.
  it('a malformed chunk in the same packet as the head: no uncaught exception, the body fails when read', async () => {
    const server = await RawServer.start((req) => reply(req, 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\nzz\r\nnope\r\n0\r\n\r\n'));
    let readError: unknown;
    const uncaught = await collectUncaught(async () => {
      const response = await client.open(request(server.url('/same-packet'))).response;
      expect(response.status).toBe(200);
      await sleep(30);
      readError = await readBody(response.body).then(
        () => undefined,
        (error: unknown) => error,
      );
    });
    expect(uncaught).toEqual([]);
    expect(readError).toBeInstanceOf(Error);
  });

  it('the server resets mid-body before the caller reads: no uncaught exception, the body fails when read', async () => {
    const server = await RawServer.start((req) => {
      req.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial');
      setTimeout(() => req.socket.destroy(), 10);
    });
    let readError: unknown;
    const uncaught = await collectUncaught(async () => {
      const response = await client.open(request(server.url('/reset-early'))).response;
      await sleep(80);
      readError = await readBody(response.body).then(
        () => undefined,
        (error: unknown) => error,
      );
    });
    expect(uncaught).toEqual([]);
    expect(readError).toBeInstanceOf(Error);
  });

  it('abort() after the head, before anyone reads the body: no uncaught exception', async () => {
    const server = await RawServer.start((req) => req.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial'));
    const uncaught = await collectUncaught(async () => {
      const call = client.open(request(server.url('/abort-unread')));
      const response = await call.response;
      call.abort();
      await sleep(30);
      expect(response.body.destroyed).toBe(true);
    });
    expect(uncaught).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Abort
// ---------------------------------------------------------------------------------------------

describe('HttpClient abort', () => {
  it('rejects with 499 request_cancelled when aborted before the response, and closes the connection', async () => {
    const server = await RawServer.start((req) => {
      if (req.target !== '/held') reply(req, ok('next'));
    });
    const call = client.open(request(server.url('/held')));
    await waitFor(() => server.requests.length === 1, 'the request to arrive');
    call.abort();
    const error = await rejectedGatewayError(call.response);
    expect(error.status).toBe(499);
    expect(error.code).toBe('request_cancelled');
    await waitFor(() => server.connections[0].closed, 'the aborted connection to close');
    expect((await fetchText(server.url('/after'))).text).toBe('next');
    expect(server.connections.length).toBe(2);
  });

  it('rejects with 499 when aborted right after open, before connecting', async () => {
    const server = await RawServer.start((req) => reply(req, ok('too late')));
    const call = client.open(request(server.url('/sync')));
    call.abort();
    const error = await rejectedGatewayError(call.response);
    expect(error.status).toBe(499);
    expect(error.code).toBe('request_cancelled');
  });

  it('rejects with 499 when aborted after the head arrived partly', async () => {
    const server = await RawServer.start((req) => req.socket.write('HTTP/1.1 200 OK\r\ncontent-'));
    const call = client.open(request(server.url('/partial')));
    await waitFor(() => server.requests.length === 1, 'the request to arrive');
    await sleep(30);
    call.abort();
    const error = await rejectedGatewayError(call.response);
    expect(error.status).toBe(499);
  });

  it('destroys the body when aborted after the head, and does not reuse the connection', async () => {
    const server = await RawServer.start((req) => {
      if (req.target === '/streaming') req.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\nfirst part');
      else reply(req, ok('next'));
    });
    const call = client.open(request(server.url('/streaming')));
    const response = await call.response;
    const [chunk] = (await once(response.body, 'data')) as [Buffer];
    expect(chunk.toString()).toBe('first part');
    const errored = new Promise<Error | undefined>((resolve) => {
      response.body.once('error', resolve);
      response.body.once('close', () => resolve(undefined));
    });
    call.abort();
    await errored;
    expect(response.body.destroyed).toBe(true);
    expect(response.body.readableEnded).toBe(false);
    await waitFor(() => server.connections[0].closed, 'the aborted connection to close');
    expect((await fetchText(server.url('/after'))).text).toBe('next');
    expect(server.connections.length).toBe(2);
  });

  it('does not reuse the connection when the reader destroys the body before its end', async () => {
    const server = await RawServer.start((req) => {
      if (req.target === '/long') req.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\nbeginning');
      else reply(req, ok('next'));
    });
    const response = await client.open(request(server.url('/long'))).response;
    await once(response.body, 'data');
    response.body.destroy();
    await waitFor(() => server.connections[0].closed, 'the abandoned connection to close');
    expect((await fetchText(server.url('/after'))).text).toBe('next');
    expect(server.connections.length).toBe(2);
  });

  it('does nothing harmful when aborted after the body ended: the connection serves the next call', async () => {
    const held: ServerRequest[] = [];
    const server = await RawServer.start((req) => {
      if (req.target === '/second') held.push(req);
      else reply(req, ok('first'));
    });
    const firstCall = client.open(request(server.url('/first')));
    const first = await firstCall.response;
    expect((await readBody(first.body)).toString()).toBe('first');
    await sleep(10);
    firstCall.abort();
    firstCall.abort();
    const secondCall = client.open(request(server.url('/second')));
    await waitFor(() => held.length === 1, 'the second request');
    firstCall.abort();
    reply(held[0], ok('second'));
    const second = await secondCall.response;
    expect((await readBody(second.body)).toString()).toBe('second');
    expect(server.connections.length).toBe(1);
    expect(first.body.readableEnded).toBe(true);
  });

  it('sendOutbound: an AbortSignal cancels with 499, an already-aborted signal too', async () => {
    const server = await RawServer.start(() => {});
    const controller = new AbortController();
    const pending = sendOutbound({ ...request(server.url('/signal')), signal: controller.signal });
    await waitFor(() => server.requests.length === 1, 'the request to arrive');
    controller.abort();
    const error = await rejectedGatewayError(pending);
    expect(error.status).toBe(499);
    expect(error.code).toBe('request_cancelled');
    const already = await rejectedGatewayError(sendOutbound({ ...request(server.url('/pre-aborted')), signal: AbortSignal.abort() }));
    expect(already.status).toBe(499);
  });

  it('sendOutbound: the signal still stops a body that stalls after the headers', async () => {
    const server = await RawServer.start((req) => req.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly part'));
    const response = await sendOutbound({ ...request(server.url('/stall')), signal: AbortSignal.timeout(200) });
    const chunks: Buffer[] = [];
    const read = new Promise<void>((resolve, reject) => {
      response.body.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.body.on('end', resolve);
      response.body.on('error', reject);
      response.body.on('close', () => reject(new Error('closed before the end')));
    });
    await expect(read).rejects.toThrow();
    expect(Buffer.concat(chunks).toString()).toBe('only part');
  });
});

// ---------------------------------------------------------------------------------------------
// Backpressure
// ---------------------------------------------------------------------------------------------

describe('HttpClient backpressure', () => {
  it('delivers a 20 MB body read slowly byte for byte, pausing the socket while the reader is behind', async () => {
    const total = 20 * 1024 * 1024;
    const payload = randomBytes(total);
    let sent = 0;
    let done = false;
    const server = await RawServer.start((req) => {
      if (req.index > 0) return reply(req, ok('after the big body'));
      reply(req, `HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: ${total}\r\n\r\n`);
      const pump = () => {
        while (sent < total) {
          const piece = payload.subarray(sent, Math.min(total, sent + 64 * 1024));
          sent += piece.length;
          if (!req.socket.write(piece)) {
            req.socket.once('drain', pump);
            return;
          }
        }
        done = true;
      };
      pump();
    });
    const response = await client.open(request(server.url('/big'))).response;
    expect(response.headers['content-length']).toBe(String(total));
    // Read nothing for a while: the client must stop reading from the socket, so the server stalls.
    await sleep(400);
    const sentWhileIdle = sent;
    expect(done).toBe(false);
    // Kernel socket buffers hold a few MB; without the pause the client would take all 20 MB.
    expect(sentWhileIdle).toBeLessThan(16 * 1024 * 1024);
    expect(response.body.readableLength).toBeLessThan(2 * 1024 * 1024);
    await sleep(200);
    expect(sent - sentWhileIdle).toBeLessThan(1024 * 1024);

    const hash = createHash('sha256');
    let received = 0;
    let chunks = 0;
    const closed = once(response.body, 'close');
    for await (const chunk of response.body) {
      hash.update(chunk as Buffer);
      received += (chunk as Buffer).length;
      chunks++;
      if (chunks % 40 === 0) await sleep(2);
      if (chunks === 100) {
        await sleep(200);
        expect(response.body.readableLength).toBeLessThan(2 * 1024 * 1024);
      }
    }
    expect(received).toBe(total);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(payload).digest('hex'));
    expect(response.body.readableEnded).toBe(true);
    await closed;
    // The paused-and-resumed connection is still good, and reused.
    await sleep(10);
    expect((await fetchText(server.url('/after'))).text).toBe('after the big body');
    expect(server.connections.length).toBe(1);
  }, 30_000);

  it('delivers a 20 MB chunked body byte for byte through a slow reader', async () => {
    const total = 20 * 1024 * 1024;
    const payload = randomBytes(total);
    const server = await RawServer.start((req) => {
      reply(req, 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n');
      let at = 0;
      const pump = () => {
        while (at < total) {
          const size = 1 + ((at * 2654435761) % (96 * 1024));
          const piece = payload.subarray(at, Math.min(total, at + size));
          at += piece.length;
          const more = req.socket.write(Buffer.concat([Buffer.from(`${piece.length.toString(16)};n=1\r\n`), piece, Buffer.from('\r\n')]));
          if (!more) {
            req.socket.once('drain', pump);
            return;
          }
        }
        req.socket.write('0\r\n\r\n');
      };
      pump();
    });
    const response = await client.open(request(server.url('/chunked-big'))).response;
    await sleep(300);
    const hash = createHash('sha256');
    let received = 0;
    let chunks = 0;
    for await (const chunk of response.body) {
      hash.update(chunk as Buffer);
      received += (chunk as Buffer).length;
      if (++chunks % 50 === 0) await sleep(1);
    }
    expect(received).toBe(total);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(payload).digest('hex'));
  }, 30_000);
});

// ---------------------------------------------------------------------------------------------
// HTTPS
// ---------------------------------------------------------------------------------------------

describe('HttpClient https', () => {
  it('speaks TLS with SNI = the hostname and a verified certificate, and reuses the connection', async () => {
    const server = await RawServer.start((req) => reply(req, ok(`secure ${req.index}`)), { tls: true });
    const first = await fetchText(server.url('/secure', 'localhost'), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'ünïcode' });
    expect(first.response.status).toBe(200);
    expect(first.text).toBe('secure 0');
    const second = await fetchText(server.url('/again', 'localhost'));
    expect(second.text).toBe('secure 1');
    expect(server.connections.length).toBe(1);
    expect(server.connections[0].servername).toBe('localhost');
    const [post] = server.requests;
    expect(post.headers.host).toBe(`localhost:${server.port}`);
    expect(post.body.toString()).toBe('ünïcode');
    expect(post.headers['content-length']).toBe(String(Buffer.byteLength('ünïcode')));
  });

  it('accepts the certificate for its IP address (SAN 127.0.0.1)', async () => {
    const server = await RawServer.start((req) => reply(req, ok('by ip')), { tls: true });
    expect((await fetchText(server.url('/ip'))).text).toBe('by ip');
  });

  it('streams a chunked body over TLS', async () => {
    const server = await RawServer.start(
      (req) => reply(req, 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n3;x=y\r\ndef\r\n0\r\nx-t: 1\r\n\r\n'),
      { tls: true },
    );
    expect((await fetchText(server.url('/c', 'localhost'))).text).toBe('abcdef');
    expect((await fetchText(server.url('/d', 'localhost'))).text).toBe('abcdef');
    expect(server.connections.length).toBe(1);
  });

  it('refuses a certificate it does not trust (no extra CA) with 502', async () => {
    const server = await RawServer.start((req) => reply(req, ok('should not be read')), { tls: true });
    const untrusting = new HttpClient();
    try {
      const error = await rejectedGatewayError(untrusting.open(request(server.url('/x', 'localhost'), { target: 'tls-upstream' })).response);
      expect(error.status).toBe(502);
      expect(error.message).toContain('tls-upstream');
    } finally {
      untrusting.close();
    }
    expect(server.requests.length).toBe(0);
  });

  it('refuses a certificate that does not name the host with 502', async (context) => {
    // 127.0.0.2 is loopback on Linux but not in the certificate's names.
    let server: RawServer;
    try {
      server = await RawServer.start((req) => reply(req, ok('should not be read')), { tls: true, host: '127.0.0.2' });
    } catch {
      context.skip();
      return;
    }
    const error = await rejectedGatewayError(client.open(request(server.url('/x'), { target: 'tls-upstream' })).response);
    expect(error.status).toBe(502);
    expect(error.message).toContain('tls-upstream');
    expect(server.requests.length).toBe(0);
  });

  it('speaks plain HTTP to an https server only if asked: http: to a TLS port fails with 502', async () => {
    const server = await RawServer.start((req) => reply(req, ok('x')), { tls: true });
    const url = new URL(`http://127.0.0.1:${server.port}/plain`);
    const error = await rejectedGatewayError(client.open(request(url)).response);
    expect(error.status).toBe(502);
  });
});

// ---------------------------------------------------------------------------------------------
// The process-wide client and the error mapping
// ---------------------------------------------------------------------------------------------

describe('openOutbound, sendOutbound and toOutboundError', () => {
  it('openOutbound and sendOutbound use a shared keep-alive pool', async () => {
    const server = await RawServer.start((req) => reply(req, ok(`shared ${req.index}`)));
    const opened = await openOutbound(request(server.url('/open'))).response;
    expect((await readBody(opened.body)).toString()).toBe('shared 0');
    await sleep(5);
    const sent = await sendOutbound(request(server.url('/send'), { method: 'POST', body: 'x' }));
    expect(sent.status).toBe(200);
    expect((await readBody(sent.body)).toString()).toBe('shared 1');
    expect(server.connections.length).toBe(1);
  });

  it('maps errors: GatewayError as is, blocked address 400, abort 499, anything else 502 naming the target and host', () => {
    const outbound = { url: new URL('https://api.example.com:8443/v1/chat'), target: 'example-ai' };
    const original = new GatewayError(418, 'teapot', { code: 'teapot' });
    expect(toOutboundError(original, outbound)).toBe(original);

    const blocked = toOutboundError(new BlockedAddressError('internal.example', '10.0.0.1'), outbound);
    expect(blocked).toBeInstanceOf(GatewayError);
    expect([blocked.status, blocked.code]).toEqual([400, 'custom_host_not_allowed']);

    const aborted = toOutboundError(Object.assign(new Error('aborted'), { name: 'AbortError' }), outbound);
    expect([aborted.status, aborted.code]).toEqual([499, 'request_cancelled']);

    const refused = toOutboundError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), outbound);
    expect([refused.status, refused.code]).toEqual([502, 'provider_unreachable']);
    expect(refused.message).toContain('example-ai');
    expect(refused.message).toContain('api.example.com:8443');
    expect(refused.message).toContain('ECONNREFUSED');
  });
});
