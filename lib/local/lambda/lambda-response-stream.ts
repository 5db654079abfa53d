import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Writable } from 'node:stream';
import { preludeDelimiter } from './lambda-globals';

/**
 * The response stream a streaming handler writes to, turned into HTTP the way API Gateway does:
 * the JSON prelude (status, headers, cookies) up to eight NUL bytes, then the body, written to the
 * socket chunk by chunk with back-pressure. Ends the socket after `idleMs` without a write.
 */
export class LambdaResponseStream extends Writable {
  private prelude: Buffer | undefined = Buffer.alloc(0);
  private readonly idleTimer: NodeJS.Timeout;
  /** Set while the socket is corked until the end of this turn of the event loop. */
  private flush: NodeJS.Immediate | undefined;
  private corked: Socket | undefined;
  /**
   * Why the prelude's status and headers could not be written as HTTP (a header value with a control
   * character, say); a 502 went out instead and the stream failed.
   */
  headError: Error | undefined;

  constructor(
    private readonly res: ServerResponse,
    idleMs: number,
  ) {
    super();
    this.idleTimer = setTimeout(() => this.destroy(new Error('Stream idle timeout')), idleMs);
    this.idleTimer.unref();
    res.on('close', () => {
      if (!res.writableFinished) this.destroy(new Error('Client closed the connection'));
    });
  }

  get headersSent(): boolean {
    return this.prelude === undefined;
  }

  setContentType(_type: string): void {
    // API Gateway reads the content type of the invocation itself; nothing to do locally.
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.idleTimer.refresh();
    let body = chunk;
    if (this.prelude !== undefined) {
      const seen = Buffer.concat([this.prelude, chunk]);
      const end = seen.indexOf(preludeDelimiter);
      if (end === -1) {
        this.prelude = seen;
        return callback();
      }
      this.prelude = undefined;
      try {
        this.writeHead(seen.subarray(0, end));
      } catch (error) {
        return this.refuseHead(error as Error, callback);
      }
      body = seen.subarray(end + preludeDelimiter.length);
      if (body.length === 0) return callback();
    }
    this.corkForThisTurn();
    if (this.res.write(body)) callback();
    else this.res.once('drain', () => callback());
  }

  override _final(callback: (error?: Error | null) => void): void {
    clearTimeout(this.idleTimer);
    if (this.prelude !== undefined) {
      // A handler that never sent a prelude: API Gateway answers as for a failed integration.
      this.prelude = undefined;
      this.res.writeHead(502, { 'content-type': 'application/json' });
      this.res.end('{"message":"Internal server error"}');
    } else this.res.end();
    this.releaseCork();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    clearTimeout(this.idleTimer);
    this.releaseCork();
    if (!this.res.writableEnded) this.res.destroy();
    callback(error);
  }

  private writeHead(preludeBytes: Buffer): void {
    const prelude = JSON.parse(preludeBytes.toString('utf8')) as {
      statusCode?: number;
      headers?: Record<string, string>;
      multiValueHeaders?: Record<string, string[]>;
      cookies?: string[];
    };
    const headers: Record<string, string | string[]> = { ...prelude.multiValueHeaders, ...prelude.headers };
    if (prelude.cookies?.length) headers['set-cookie'] = prelude.cookies;
    this.res.writeHead(prelude.statusCode ?? 200, headers);
    this.corkForThisTurn();
  }

  /**
   * Answers as API Gateway does for a function response it cannot use, before anything of the
   * response went out: a 502 with its JSON body. The stream then fails, which stops the handler's
   * body (and the provider call behind it).
   */
  private refuseHead(error: Error, callback: (error?: Error | null) => void): void {
    this.headError = error;
    if (!this.res.headersSent) {
      const body = '{"message":"Internal server error"}';
      // With its reason phrase: the failed writeHead has left its own.
      this.res.writeHead(502, 'Bad Gateway', { 'content-type': 'application/json', 'content-length': String(body.length) });
      this.res.end(body);
    }
    callback(error);
  }

  /**
   * Whatever the handler writes in this turn of the event loop goes out in one socket write at its
   * end: the headers with the body (usually all of it), a stream's last chunk with its terminator.
   * Nothing waits longer than the turn, so a slow stream's chunks still leave as they come. The
   * socket is corked, not the response: from Node 22 on, a corked ServerResponse never emits
   * 'drain' and drops what it holds when it is ended before it is uncorked.
   */
  private corkForThisTurn(): void {
    if (this.flush !== undefined || !this.res.socket) return;
    this.corked = this.res.socket;
    this.corked.cork();
    this.flush = setImmediate(() => this.releaseCork());
  }

  private releaseCork(): void {
    if (this.flush === undefined) return;
    clearImmediate(this.flush);
    this.flush = undefined;
    this.corked?.uncork();
    this.corked = undefined;
    if (!this.res.writableEnded && this.res.writableLength === 0 && !this.res.headersSent) this.res.flushHeaders();
  }
}
