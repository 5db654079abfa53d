/**
 * An incremental HTTP/1.1 response parser: bytes from a socket in, a head, body bytes (de-chunked)
 * and an end out. Written for the gateway's outbound client, which needs only responses, no
 * upgrades and no pipelining: a small state machine is cheaper per request than node:http's
 * ClientRequest/IncomingMessage machinery, and it is all the client has to trust.
 */

import { nameMap } from '../core/name-map';

export interface ResponseHead {
  status: number;
  /**
   * Lower-cased names, on an object without a prototype (a header may be named `constructor` or
   * `__proto__`). Repeated `set-cookie` is an array; for the headers node:http treats as
   * single-valued the first value is kept; other repeats are joined with ', '. A header whose value
   * cannot be sent on in an HTTP header (see `unsendableHeaderValue`) is left out.
   */
  headers: Record<string, string | string[]>;
  /** The server allows another request on this connection and the body has a known end. */
  keepAlive: boolean;
  /** N from a `keep-alive: timeout=N` header, when sent. */
  keepAliveTimeoutSec?: number;
}

export interface ResponseParserEvents {
  head(head: ResponseHead): void;
  body(chunk: Buffer): void;
  end(): void;
}

export class HttpParseError extends Error {
  constructor(
    readonly code: 'HPE_INVALID_RESPONSE' | 'HPE_HEADER_OVERFLOW' | 'HPE_INCOMPLETE',
    message: string,
  ) {
    super(message);
    this.name = 'HttpParseError';
  }
}

const enum State {
  Head,
  LengthBody,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  CloseBody,
  Done,
}

/** Headers node:http keeps the first value of when they repeat. */
const singleValued = new Set([
  'content-type',
  'content-length',
  'user-agent',
  'referer',
  'host',
  'authorization',
  'proxy-authorization',
  'if-modified-since',
  'if-unmodified-since',
  'from',
  'location',
  'max-forwards',
  'retry-after',
  'etag',
  'last-modified',
  'server',
  'age',
  'expires',
]);

const statusLine = /^HTTP\/1\.([01]) (\d{3})(?: [^\r\n]*)?$/;
/** An HTTP token (RFC 9110): what a header name may be. */
export const httpToken = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/**
 * A character node:http refuses to write in a header value: a control character other than tab
 * (NUL, a CR or LF not ending the line, ...), DEL, or anything above 0xff (which the parser, reading
 * latin1, never sees).
 */
export const unsendableHeaderValue = /[^\t\x20-\x7e\x80-\xff]/;
/**
 * Headers the parser frames the response or the connection by: when one of them holds such a
 * character the response is malformed, rather than a header to leave out.
 */
const framingHeaders = new Set(['content-length', 'transfer-encoding', 'connection']);
const hexSize = /^[0-9a-fA-F]{1,13}$/;
const CR = 13;
const LF = 10;
/** Longest chunk-size line (with extensions) or trailer line accepted. */
const maxLineBytes = 8 * 1024;

/**
 * Adds one header field to the head's headers. A value node:http could not write is left out (the
 * gateway relays provider headers, and one bad header should not cost a good answer), unless the
 * parser frames the response by that header.
 */
function addHeader(headers: Record<string, string | string[]>, name: string, value: string): void {
  if (unsendableHeaderValue.test(value)) {
    if (framingHeaders.has(name)) throw new HttpParseError('HPE_INVALID_RESPONSE', `The response's ${name} header has a control character in its value.`);
    return;
  }
  const existing = headers[name];
  if (existing === undefined) headers[name] = name === 'set-cookie' ? [value] : value;
  else if (name === 'set-cookie') (existing as string[]).push(value);
  else if (name === 'content-length') {
    if (existing !== value) throw new HttpParseError('HPE_INVALID_RESPONSE', 'The response has two different content-length headers.');
  } else if (!singleValued.has(name)) headers[name] = `${existing}, ${value}`;
}

/** `text` from `start` without the optional whitespace (spaces and tabs, RFC 9110) at either end. */
function trimOws(text: string, start: number): string {
  let from = start;
  let to = text.length;
  while (from < to && (text.charCodeAt(from) === 32 || text.charCodeAt(from) === 9)) from++;
  while (to > from && (text.charCodeAt(to - 1) === 32 || text.charCodeAt(to - 1) === 9)) to--;
  return text.slice(from, to);
}

export class ResponseParser {
  private state = State.Head;
  /** Unparsed bytes of the head, or of a chunk-size/trailer line, carried between feeds. */
  private pending: Buffer | undefined;
  /** Bytes left of a content-length body or of the current chunk. */
  private remaining = 0;
  private keepAlive = false;
  private stray = false;
  private readonly maxHeaderBytes: number;
  private readonly headRequest: boolean;

  constructor(
    private readonly events: ResponseParserEvents,
    options: { headRequest?: boolean; maxHeaderBytes?: number } = {},
  ) {
    this.headRequest = options.headRequest ?? false;
    this.maxHeaderBytes = options.maxHeaderBytes ?? 64 * 1024;
  }

  get complete(): boolean {
    return this.state === State.Done;
  }

  get reusable(): boolean {
    return this.state === State.Done && this.keepAlive && !this.stray;
  }

  feed(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      switch (this.state) {
        case State.Head:
          offset = this.readHead(chunk, offset);
          break;
        case State.LengthBody:
          offset = this.takeBody(chunk, offset);
          if (this.remaining === 0) this.finishBody();
          break;
        case State.CloseBody:
          this.emitBody(chunk, offset, chunk.length);
          offset = chunk.length;
          break;
        case State.ChunkSize:
          offset = this.readLine(chunk, offset, (line) => this.onChunkSize(line));
          break;
        case State.ChunkData:
          offset = this.takeBody(chunk, offset);
          if (this.remaining === 0) {
            this.state = State.ChunkDataEnd;
            this.remaining = 2;
          }
          break;
        case State.ChunkDataEnd: {
          // The CRLF after a chunk's data, possibly split across feeds.
          const expected = this.remaining === 2 ? CR : LF;
          if (chunk[offset] !== expected) throw new HttpParseError('HPE_INVALID_RESPONSE', 'A chunk of the response body did not end with CRLF.');
          offset += 1;
          this.remaining -= 1;
          if (this.remaining === 0) this.state = State.ChunkSize;
          break;
        }
        case State.Trailers:
          offset = this.readLine(chunk, offset, (line) => {
            if (line.length === 0) this.finishBody();
          });
          break;
        case State.Done:
          // Bytes after the end of the response: the connection cannot be trusted with another request.
          this.stray = true;
          return;
      }
    }
  }

  finish(): void {
    if (this.state === State.Done) return;
    if (this.state === State.CloseBody) {
      this.state = State.Done;
      this.events.end();
      return;
    }
    throw new HttpParseError(
      'HPE_INCOMPLETE',
      this.state === State.Head
        ? 'The connection closed before a complete response head arrived.'
        : 'The connection closed before the whole response body arrived.',
    );
  }

  /** Emits up to `remaining` body bytes from `offset`; returns the offset after them. */
  private takeBody(chunk: Buffer, offset: number): number {
    const take = Math.min(this.remaining, chunk.length - offset);
    this.remaining -= take;
    this.emitBody(chunk, offset, offset + take);
    return offset + take;
  }

  private emitBody(chunk: Buffer, start: number, end: number): void {
    if (end > start) this.events.body(start === 0 && end === chunk.length ? chunk : chunk.subarray(start, end));
  }

  private finishBody(): void {
    this.state = State.Done;
    this.events.end();
  }

  /** Reads up to the blank line that ends the head; returns the offset after it (or the chunk's end). */
  private readHead(chunk: Buffer, offset: number): number {
    let data = chunk;
    let start = offset;
    let searchFrom = offset;
    if (this.pending) {
      // Start the search a few bytes back, so a CRLFCRLF split across feeds is found.
      searchFrom = Math.max(0, this.pending.length - 3);
      data = Buffer.concat([this.pending, chunk.subarray(offset)]);
      start = 0;
    }
    const end = data.indexOf('\r\n\r\n', searchFrom, 'latin1');
    if (end < 0) {
      if (data.length - start > this.maxHeaderBytes)
        throw new HttpParseError('HPE_HEADER_OVERFLOW', `The response head is larger than ${this.maxHeaderBytes} bytes.`);
      this.pending = start === 0 && data !== chunk ? data : Buffer.from(data.subarray(start));
      return chunk.length;
    }
    if (end - start > this.maxHeaderBytes) throw new HttpParseError('HPE_HEADER_OVERFLOW', `The response head is larger than ${this.maxHeaderBytes} bytes.`);
    const consumedFromChunk = this.pending ? end + 4 - this.pending.length + offset : end + 4;
    this.pending = undefined;
    this.onHead(data.toString('latin1', start, end));
    return consumedFromChunk;
  }

  private onHead(text: string): void {
    const lines = text.split('\r\n');
    const match = statusLine.exec(lines[0]);
    if (!match)
      throw new HttpParseError('HPE_INVALID_RESPONSE', `The response does not start with an HTTP/1.x status line: ${JSON.stringify(lines[0].slice(0, 80))}.`);
    const http10 = match[1] === '0';
    const status = Number(match[2]);
    const headers = nameMap<string | string[]>();
    // A field is added once its last (folded) line is read.
    let name: string | undefined;
    let value = '';
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i];
      if (line.charCodeAt(0) === 32 || line.charCodeAt(0) === 9) {
        // Obsolete line folding: the value continues.
        if (name === undefined) throw new HttpParseError('HPE_INVALID_RESPONSE', 'The response head has a folded line with nothing to continue.');
        value = `${value} ${trimOws(line, 0)}`;
        continue;
      }
      if (name !== undefined) addHeader(headers, name, value);
      const colon = line.indexOf(':');
      name = colon > 0 ? line.slice(0, colon).toLowerCase() : '';
      if (!httpToken.test(name))
        throw new HttpParseError('HPE_INVALID_RESPONSE', `The response has a malformed header line: ${JSON.stringify(line.slice(0, 80))}.`);
      value = trimOws(line, colon + 1);
    }
    if (name !== undefined) addHeader(headers, name, value);

    // Informational answers (100 Continue, 103 Early Hints) precede the real one.
    if (status >= 100 && status < 200 && status !== 101) return;
    if (status < 100) throw new HttpParseError('HPE_INVALID_RESPONSE', `The response has an invalid status ${status}.`);

    const connection = typeof headers.connection === 'string' ? headers.connection.toLowerCase() : '';
    let keepAlive = http10 ? /(^|,)\s*keep-alive\s*(,|$)/.test(connection) : !/(^|,)\s*close\s*(,|$)/.test(connection);
    const head: ResponseHead = { status, headers, keepAlive };
    const hint = typeof headers['keep-alive'] === 'string' ? /timeout\s*=\s*(\d+)/i.exec(headers['keep-alive']) : null;
    if (hint) head.keepAliveTimeoutSec = Number(hint[1]);

    const transferEncoding = typeof headers['transfer-encoding'] === 'string' ? headers['transfer-encoding'].toLowerCase() : undefined;
    const contentLength = headers['content-length'] as string | undefined;
    if (this.headRequest || status === 204 || status === 304 || status === 101) {
      if (status === 101) keepAlive = false;
      this.state = State.Done;
    } else if (transferEncoding !== undefined) {
      if (/(^|,)\s*chunked\s*$/.test(transferEncoding)) this.state = State.ChunkSize;
      else {
        keepAlive = false;
        this.state = State.CloseBody;
      }
    } else if (contentLength !== undefined) {
      if (!/^\d{1,15}$/.test(contentLength))
        throw new HttpParseError('HPE_INVALID_RESPONSE', `The response has an invalid content-length: ${JSON.stringify(contentLength)}.`);
      this.remaining = Number(contentLength);
      this.state = this.remaining === 0 ? State.Done : State.LengthBody;
    } else {
      keepAlive = false;
      this.state = State.CloseBody;
    }
    head.keepAlive = keepAlive;
    this.keepAlive = keepAlive;
    this.events.head(head);
    if (this.state === State.Done) this.events.end();
  }

  /** Reads one CRLF-terminated line (chunk size or trailer), carrying a partial line between feeds. */
  private readLine(chunk: Buffer, offset: number, onLine: (line: string) => void): number {
    const lf = chunk.indexOf(LF, offset);
    if (lf < 0) {
      const rest = chunk.subarray(offset);
      this.pending = this.pending ? Buffer.concat([this.pending, rest]) : Buffer.from(rest);
      if (this.pending.length > maxLineBytes) throw new HttpParseError('HPE_INVALID_RESPONSE', 'A chunk-size or trailer line of the response is too long.');
      return chunk.length;
    }
    let line = chunk.toString('latin1', offset, lf);
    if (this.pending) {
      line = this.pending.toString('latin1') + line;
      this.pending = undefined;
    }
    if (line.length > maxLineBytes) throw new HttpParseError('HPE_INVALID_RESPONSE', 'A chunk-size or trailer line of the response is too long.');
    if (line.charCodeAt(line.length - 1) !== CR) throw new HttpParseError('HPE_INVALID_RESPONSE', 'A line of the chunked response body did not end with CRLF.');
    onLine(line.slice(0, -1));
    return lf + 1;
  }

  private onChunkSize(line: string): void {
    const semicolon = line.indexOf(';');
    const size = (semicolon < 0 ? line : line.slice(0, semicolon)).trim();
    if (!hexSize.test(size))
      throw new HttpParseError('HPE_INVALID_RESPONSE', `The chunked response body has an invalid chunk size: ${JSON.stringify(size.slice(0, 20))}.`);
    this.remaining = parseInt(size, 16);
    this.state = this.remaining === 0 ? State.Trailers : State.ChunkData;
  }
}
