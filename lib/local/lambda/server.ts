import { randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { GatewayError } from '../../core/errors';
import { nameMap } from '../../core/name-map';
import { streamingMarker } from './lambda-globals';
import { LambdaResponseStream } from './lambda-response-stream';
import { buildProxyEvent } from './proxy-event';
import { hasMalformedEscape, RouteTable } from './route-table';
import type { ServerlessFunction, ServerlessRoute } from '../template/serverless-config';

// API Gateway's limits for REST APIs.
const maxPayloadBytes = 10 * 1024 * 1024;
const maxHeaderBytes = 10_240;
const streamIdleMs = 5 * 60_000;
const headersTooLarge = `Request headers total more than ${maxHeaderBytes} bytes; API Gateway refuses them. Use a saved config instead of a large inline x-gateway-config.`;

export type LambdaHandler = (event: unknown, contextOrStream: unknown, context?: unknown) => Promise<unknown>;

export interface LocalServerOptions {
  host: string;
  port: number;
  stage: string;
  service: string;
  routes: readonly ServerlessRoute[];
  functions: readonly ServerlessFunction[];
  /** The handler of a function, loaded on its first invocation (as Lambda loads a function's code). */
  handlerFor(functionName: string): LambdaHandler | Promise<LambdaHandler>;
}

export interface LocalServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** API Gateway + Lambda on one port: matches routes, builds proxy events, invokes the bundles. */
export async function startLocalServer(options: LocalServerOptions): Promise<LocalServer> {
  const table = new RouteTable(options.routes);
  const functions = new Map(options.functions.map((fn) => [fn.name, fn]));
  /** Each connection's responses not yet finished, so a parse error never writes into one under way. */
  const unfinished = new WeakMap<Duplex, Set<ServerResponse>>();
  const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
    let responses = unfinished.get(req.socket);
    if (!responses) unfinished.set(req.socket, (responses = new Set()));
    responses.add(res);
    res.once('close', () => responses.delete(res));
    handle(req, res).catch((error) => {
      console.error('Local runtime error', error);
      if (!res.headersSent) sendJson(res, 502, { message: 'Internal server error' });
      else if (!res.writableEnded) res.destroy();
    });
  });
  // Requests Node's HTTP parser refuses (raw non-ASCII bytes in the target, a control character in
  // a header, ...) get the gateway's error body rather than a bare `400 Bad Request`.
  const answered = new WeakSet<Duplex>();
  const lingerMs = 5_000;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // The parser reports every later packet on the connection again; the first answer stands.
    if (answered.has(socket)) return;
    answered.add(socket);
    const refusal = clientErrorAnswer(error);
    const busy = [...(unfinished.get(socket) ?? [])].some((res) => res.headersSent);
    if (!refusal || !socket.writable || busy) {
      socket.destroy();
      return;
    }
    const payload = JSON.stringify(refusal.toBody());
    const head = `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(payload)}\r\nconnection: close\r\n\r\n`;
    // The answer to HEAD has no body (its client would read the body as a next response).
    const isHead = (error as { rawPacket?: Buffer }).rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
    // A lingering close: the client may still be sending the body of the refused request, and a
    // socket destroyed now would reset the connection before the client reads the answer. Later
    // bytes are read (and refused above) until the client closes, for at most lingerMs.
    socket.end(isHead ? head : head + payload);
    const linger = setTimeout(() => socket.destroy(), lingerMs);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = requestUrl(req.url ?? '/');
    if (!url) {
      req.resume();
      return sendError(
        res,
        400,
        `The request target ${JSON.stringify((req.url ?? '').slice(0, 100))} is not a path; send a path such as /v1/chat/completions.`,
        'invalid_path',
      );
    }
    // WHATWG URLs resolve `..` and `%2e%2e` segments; API Gateway hands the path over as sent, so
    // the route (pass-through, which refuses dot segments) sees what the client wrote.
    const path = rawPathOf(req.url ?? '/', url);
    if (hasMalformedEscape(path)) {
      req.resume();
      return sendError(
        res,
        400,
        'The request path holds a malformed percent-escape: a % must start an escape of UTF-8 bytes such as %2F; send a literal % as %25.',
        'invalid_path',
      );
    }
    const match = table.match(req.method ?? 'GET', path);
    if (!match?.route) {
      req.resume();
      return sendError(
        res,
        404,
        `Unknown route ${req.method} ${path}. Inference routes live under /v1 (for example POST /v1/chat/completions).`,
        'route_not_found',
      );
    }
    if (headerBytes(req) > maxHeaderBytes) {
      req.resume();
      return sendError(res, 431, headersTooLarge, 'headers_too_large');
    }
    const body = await readRequestBody(req);
    if (body === undefined) return sendJson(res, 413, { message: 'Request Too Long' });

    const route = match.route;
    const fn = functions.get(route.functionName)!;
    const handler = await options.handlerFor(route.functionName);
    const event = buildProxyEvent(req, url, path, match, body, options.stage);
    const timeoutMs = Math.min(route.integrationTimeoutMs, fn.timeoutSeconds * 1000);
    const context = lambdaContext(options.service, options.stage, fn, event.requestContext.requestId, timeoutMs);

    if ((handler as unknown as Record<symbol, unknown>)[streamingMarker] === 'response') {
      const stream = new LambdaResponseStream(res, streamIdleMs);
      // A client may leave before the handler has written anything (it is still waiting on a
      // provider): the stream's error then has no other listener, and must not end the process.
      stream.on('error', () => undefined);
      const deadline = setTimeout(() => stream.destroy(new Error('Integration timeout')), timeoutMs).unref();
      try {
        await handler(event, stream, context);
      } catch (error) {
        if (!res.headersSent) sendJson(res, 502, { message: 'Internal server error' });
        else if (!res.writableEnded) res.destroy();
        if (!isDisconnect(error)) console.error(`Function ${route.functionName} failed`, error);
      } finally {
        clearTimeout(deadline);
      }
      if (stream.headError) reportUnsendableHead(route.functionName, stream.headError);
      return;
    }

    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    const result = await Promise.race([handler(event, context) as Promise<APIGatewayProxyResult>, timeout]).finally(() => clearTimeout(timer));
    if (result === 'timeout') return sendJson(res, 504, { message: 'Endpoint request timed out' });
    const headers = nameMap<string | string[]>();
    for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) headers[name] = values.map(String);
    for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
    const payload = result.body === undefined ? Buffer.alloc(0) : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
    try {
      res.writeHead(result.statusCode, { ...headers, 'content-length': String(payload.length) });
    } catch (error) {
      // A header name or value Node will not write (a control character, say): API Gateway answers a
      // function response it cannot use with a 502.
      reportUnsendableHead(route.functionName, error);
      return sendJson(res, 502, { message: 'Internal server error' });
    }
    res.end(payload);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

export function lambdaContext(service: string, stage: string, fn: ServerlessFunction, requestId: string, timeoutMs: number): Context {
  const functionName = `${service}-${stage}-${fn.name}`;
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: String(fn.memorySize),
    awsRequestId: requestId || randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function reportUnsendableHead(functionName: string, error: unknown): void {
  console.error(`Function ${functionName} answered with a status or headers that cannot be sent as HTTP; answered 502`, error);
}

function headerBytes(req: IncomingMessage): number {
  let total = 0;
  for (const part of req.rawHeaders) total += Buffer.byteLength(part) + 2;
  return total;
}

/** The whole request body, or undefined when it is above API Gateway's payload limit. */
function readRequestBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxPayloadBytes) tooLarge = true;
      else chunks.push(chunk);
    });
    req.once('end', () => resolve(tooLarge ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  // The reason phrase is given: a writeHead that failed before this one has left its own.
  res.writeHead(status, STATUS_CODES[status], { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) });
  res.end(payload);
}

function sendError(res: ServerResponse, status: number, message: string, code: string): void {
  sendJson(res, status, { error: { message, type: 'invalid_request_error', param: null, code } });
}

/**
 * The answer to a request Node's HTTP parser refused, in the gateway's error shape; undefined for
 * errors that are not about the request (the connection reset).
 */
function clientErrorAnswer(error: NodeJS.ErrnoException): GatewayError | undefined {
  const reason = (error as { reason?: string }).reason ?? error.message;
  switch (error.code) {
    case 'HPE_INVALID_URL':
      return new GatewayError(
        400,
        'The request target holds a byte that may not appear in a URL (a control character or a non-ASCII byte). Percent-encode it as UTF-8: é as %C3%A9, a space as %20.',
        { code: 'invalid_path' },
      );
    case 'HPE_INVALID_HEADER_TOKEN':
      return new GatewayError(
        400,
        `A request header is malformed (${reason}): a name must be a token such as x-request-id, and a value may not hold control characters.`,
        {
          code: 'invalid_request_header',
        },
      );
    case 'HPE_HEADER_OVERFLOW':
      return new GatewayError(431, headersTooLarge, { code: 'headers_too_large' });
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new GatewayError(413, 'The chunk extensions of the request body are too large; send the body without chunk extensions.', {
        code: 'request_too_large',
      });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new GatewayError(408, 'The request headers did not arrive in time; the connection is closed.', { code: 'request_timeout' });
    default:
      if (!error.code?.startsWith('HPE_')) return undefined;
      return new GatewayError(
        400,
        `The request is not valid HTTP/1.1 (${reason}). Send a request line of a method, a path with spaces and non-ASCII characters percent-encoded, and HTTP/1.1, then well-formed headers.`,
        { code: 'invalid_http_request' },
      );
  }
}

function isDisconnect(error: unknown): boolean {
  const message = (error as Error)?.message ?? '';
  return message.includes('Client closed') || (error as { code?: string })?.code === 'ERR_STREAM_PREMATURE_CLOSE';
}

/**
 * The request target as a URL on this host. A target is joined to the origin as text: resolved
 * against it, `//x/y` would name the host `x` (or fail to parse) instead of being the path `//x/y`.
 */
function requestUrl(target: string): URL | undefined {
  try {
    return target.startsWith('/') ? new URL(`http://localhost${target}`) : new URL(target, 'http://localhost');
  } catch {
    return undefined;
  }
}

/** The request target's path exactly as sent (origin form), without resolving dot segments. */
function rawPathOf(target: string, parsed: URL): string {
  if (!target.startsWith('/')) return parsed.pathname;
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}
