import { Readable } from 'node:stream';
import { GatewayError } from '../core/errors';
import { assertLiteralHostAllowed } from './address-guard';
import { ConnectionPool, originOf, type Connection, type ConnectionUser, type Origin } from './connection-pool';
import { HttpParseError, httpToken, ResponseParser, unsendableHeaderValue, type ResponseHead, type ResponseParserEvents } from './response-parser';

/**
 * The one way the gateway talks to the outside: HTTP/1.1 over keep-alive connections that are
 * opened through the address guard. Redirects are never followed and bodies are never decompressed.
 * Written on net/tls sockets with a small response parser rather than node:http: the proxied
 * request costs about a third of the CPU (see docs/decisions.md), and undici would double the
 * inference bundles.
 */
export interface OutboundRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: Buffer | string;
  /** Names the upstream in error messages, e.g. the provider. */
  target: string;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

/** An outbound call in flight: its response, and a way to stop it (before or after the answer). */
export interface OutboundCall {
  response: Promise<OutboundResponse>;
  abort(): void;
}

/** Headers the client writes itself from the request. */
const framingHeaders = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);
const nonAscii = /[\x80-\xff]/;
/** Methods that send `content-length: 0` when they have no body, as node:http frames them. */
const bodyMethods = new Set(['POST', 'PUT', 'PATCH']);
/**
 * Methods sent again on a new connection when a reused one closes before answering (the server
 * retired it as the request went out). Never POST: the provider may have started the work, and a
 * second model call is billed twice; routing's own retries decide about those.
 */
const idempotentMethods = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

export class HttpClient {
  private readonly pool: ConnectionPool;

  constructor(options: { tls?: { ca?: string | Buffer } } = {}) {
    this.pool = new ConnectionPool({ ca: options.tls?.ca });
  }

  /**
   * Starts a call. The hot path stops calls with `abort()` from its own timer rather than an
   * AbortSignal: a signal per request costs listeners and, on abort, a DOMException.
   */
  open(request: OutboundRequest): OutboundCall {
    const exchange = new Exchange(request, this.pool);
    return { response: exchange.response, abort: () => exchange.abort() };
  }

  /** Ends every idle connection. */
  close(): void {
    this.pool.close();
  }
}

const defaultClient = new HttpClient();

/** Starts an outbound call on the gateway's shared connection pool. */
export function openOutbound(outbound: OutboundRequest): OutboundCall {
  return defaultClient.open(outbound);
}

/**
 * One outbound call; `signal` stops it (for calls off the hot path: token exchanges, media fetches),
 * until its body has been read: a host that sends its headers and then stalls is stopped too.
 */
export async function sendOutbound(outbound: OutboundRequest & { signal?: AbortSignal }): Promise<OutboundResponse> {
  const call = openOutbound(outbound);
  const { signal } = outbound;
  if (!signal) return call.response;
  if (signal.aborted) call.abort();
  const onAbort = () => call.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  let response: OutboundResponse;
  try {
    response = await call.response;
  } catch (error) {
    signal.removeEventListener('abort', onAbort);
    throw error;
  }
  response.body.once('close', () => signal.removeEventListener('abort', onAbort));
  return response;
}

/** Maps a connection failure to a 4xx (refused address, bad header) or a 502 that names the upstream. */
export function toOutboundError(error: unknown, outbound: Pick<OutboundRequest, 'url' | 'target'>): GatewayError {
  if (error instanceof GatewayError) return error;
  const err = error as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err.code ?? err.cause?.code;
  if (code === 'GATEWAY_ADDRESS_BLOCKED') {
    return new GatewayError(400, err.message ?? 'Address not allowed', { code: 'custom_host_not_allowed', param: 'x-gateway-custom-host' });
  }
  if (err.name === 'AbortError' || code === 'ABORT_ERR') {
    return new GatewayError(499, 'The request was cancelled before the provider answered.', { code: 'request_cancelled' });
  }
  const message =
    error instanceof HttpParseError
      ? `${outbound.target} at ${outbound.url.host} sent an invalid HTTP response: ${error.message}`
      : `Could not reach ${outbound.target} at ${outbound.url.host}: ${code ?? err.message ?? 'unknown error'}.`;
  return new GatewayError(502, message, {
    code: 'provider_unreachable',
    provider: outbound.target,
    cause: error,
  });
}

const abortError = () => Object.assign(new Error('The outbound call was aborted.'), { name: 'AbortError', code: 'ABORT_ERR' });
const hangUp = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

/** The request head, with the framing the client owns; throws a 400 for a header that could split it. */
function requestHead(request: OutboundRequest, bodyBytes: number | undefined): { text: string; ascii: boolean } {
  const { url } = request;
  let host = url.host;
  let lines = '';
  let ascii = true;
  for (const name in request.headers) {
    const value = request.headers[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (!httpToken.test(name) || unsendableHeaderValue.test(value)) {
      throw new GatewayError(
        400,
        `The request header ${JSON.stringify(name)} has characters HTTP does not allow in a header${httpToken.test(name) ? ' value' : ' name'}.`,
        {
          code: 'invalid_request_header',
        },
      );
    }
    if (lower === 'host') host = value;
    else if (!framingHeaders.has(lower)) lines += `${name}: ${value}\r\n`;
    if (ascii && nonAscii.test(value)) ascii = false;
  }
  const length = bodyBytes ?? (bodyMethods.has(request.method) ? 0 : undefined);
  const framing = length === undefined ? '' : `content-length: ${length}\r\n`;
  return { text: `${request.method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${host}\r\n${framing}${lines}\r\n`, ascii };
}

/** The response body: a Readable fed by the parser, pausing the socket while its reader is behind. */
class ResponseBody extends Readable {
  constructor(private readonly exchange: Exchange) {
    super();
  }

  override _read(): void {
    this.exchange.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // A reader that gives up before the end: the rest of the body is never read, so the connection goes.
    this.exchange.readerGone();
    callback(error);
  }
}

/** One request and its response on a pooled connection, retried once when a reused connection was stale. */
class Exchange implements ConnectionUser, ResponseParserEvents {
  readonly response: Promise<OutboundResponse>;
  private resolve!: (response: OutboundResponse) => void;
  private reject!: (error: unknown) => void;
  private origin: Origin | undefined;
  private requestHead: { text: string; ascii: boolean } | undefined;
  private connection: Connection | undefined;
  private parser: ResponseParser | undefined;
  private stream: ResponseBody | undefined;
  private idleMs: number | undefined;
  private received = false;
  private written = false;
  private retried = false;
  private paused = false;
  /** The response ended or failed; the connection is no longer this exchange's. */
  private finished = false;
  /** The connection had carried an exchange before this one. */
  private servedBefore = false;

  constructor(
    private readonly request: OutboundRequest,
    private readonly pool: ConnectionPool,
  ) {
    this.response = new Promise<OutboundResponse>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    const { url } = request;
    try {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`unsupported protocol ${url.protocol}`);
      assertLiteralHostAllowed(url.hostname);
      this.requestHead = requestHead(request, request.body === undefined ? undefined : Buffer.byteLength(request.body));
      this.origin = originOf(url);
    } catch (error) {
      this.finish(error);
      return;
    }
    this.send(this.pool.acquire(this.origin!));
  }

  /** Stops the call; once the whole response has arrived there is nothing left to stop. */
  abort(): void {
    if (this.finished) return;
    this.fail(abortError());
  }

  resume(): void {
    if (this.paused) {
      this.paused = false;
      this.connection?.socket.resume();
    }
  }

  readerGone(): void {
    if (!this.finished) this.fail(abortError());
  }

  // --- connection events

  onData(chunk: Buffer): void {
    this.received = true;
    try {
      this.parser!.feed(chunk);
    } catch (error) {
      this.fail(error);
      return;
    }
    // Decided after the whole chunk is parsed: bytes after the end make the connection untrustworthy.
    if (this.finished && this.connection) this.settleConnection(this.connection);
  }

  onClose(error: Error | undefined): void {
    this.connection = undefined;
    if (this.finished) return;
    const parser = this.parser!;
    if (!this.received && !this.retried && this.servedBefore && idempotentMethods.has(this.request.method)) {
      // The server closed an idle connection as the request went out: try once on a new one.
      this.retried = true;
      this.send(this.pool.acquire(this.origin!, true));
      return;
    }
    try {
      parser.finish();
    } catch (parseError) {
      this.fail(error ?? (this.received ? parseError : hangUp()));
    }
  }

  // --- parser events

  head(head: ResponseHead): void {
    if (head.keepAliveTimeoutSec !== undefined) this.idleMs = Math.max(0, head.keepAliveTimeoutSec * 1000 - Math.min(1000, head.keepAliveTimeoutSec * 500));
    this.stream = new ResponseBody(this);
    this.resolve({ status: head.status, headers: head.headers, body: this.stream });
  }

  body(chunk: Buffer): void {
    if (!this.stream!.push(chunk) && !this.paused && this.connection) {
      this.paused = true;
      this.connection.socket.pause();
    }
  }

  end(): void {
    this.finished = true;
    this.stream!.push(null);
  }

  // --- internals

  /** Back to the pool after a complete exchange, or closed when it cannot carry another. */
  private settleConnection(connection: Connection): void {
    this.connection = undefined;
    if (this.paused) connection.socket.resume();
    if (this.parser!.reusable && this.written) this.pool.release(connection, this.idleMs);
    else connection.destroy();
  }

  private send(connection: Connection): void {
    this.connection = connection;
    this.servedBefore = connection.served > 0;
    this.received = false;
    this.written = false;
    connection.user = this;
    this.parser = new ResponseParser(this, { headRequest: this.request.method === 'HEAD' });
    const { body } = this.request;
    const { socket } = connection;
    const onWritten = () => {
      this.written = true;
    };
    const head = this.requestHead!;
    if (body === undefined) socket.write(head.text, 'latin1', onWritten);
    else if (typeof body === 'string' && head.ascii) socket.write(head.text + body, 'utf8', onWritten);
    else {
      socket.cork();
      socket.write(head.text, 'latin1');
      socket.write(body, onWritten);
      socket.uncork();
    }
  }

  /** Ends the exchange with an error: the response rejects, or the body errors if it was under way. */
  private fail(error: unknown): void {
    const connection = this.connection;
    this.connection = undefined;
    if (connection) {
      connection.user = undefined;
      connection.destroy();
    }
    if (!this.finished) this.finish(error);
  }

  private finish(error: unknown): void {
    this.finished = true;
    const stream = this.stream;
    if (!stream) this.reject(toOutboundError(error, this.request));
    else if (!stream.destroyed) {
      if (stream.listenerCount('error') > 0) stream.destroy(error as Error);
      else {
        // The caller has the response but may not be reading yet (its continuation runs after this
        // turn's callbacks): give it the turn to listen, and never let an unheard error end the process.
        setImmediate(() => {
          if (stream.destroyed) return;
          if (stream.listenerCount('error') === 0) stream.on('error', () => undefined);
          stream.destroy(error as Error);
        });
      }
    }
  }
}
