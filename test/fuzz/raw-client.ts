/**
 * A small HTTP/1.1 client on node:http for requests fetch() will not send: any method token, raw
 * latin1 bytes in the request target, repeated and prototype-named headers in a chosen order. It
 * never throws for what the server does: a hang, a reset or an unparseable answer comes back as
 * `failure`.
 */
import http from 'node:http';

export interface RawRequest {
  method: string;
  target: string;
  headers: Array<[string, string]>;
  body?: Buffer;
}

export interface RawOutcome {
  status?: number;
  headers: http.IncomingHttpHeaders;
  /** The body, up to `maxBodyBytes`. */
  body: Buffer;
  bodyBytes: number;
  /** `timeout`: no complete answer in time; `no-answer`: the connection ended (or the answer did not parse) before a status; `body-cut`: the body broke off. */
  failure?: 'timeout' | 'no-answer' | 'body-cut';
  message?: string;
  elapsedMs: number;
}

const maxBodyBytes = 4 * 1024 * 1024;

export function createRawClient(baseUrl: string) {
  const url = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const host = `${url.hostname}:${url.port}`;

  function send(request: RawRequest, deadlineMs: number): Promise<RawOutcome> {
    const started = performance.now();
    return new Promise((resolve) => {
      let status: number | undefined;
      let headers: http.IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      let bodyBytes = 0;
      let settled = false;
      const finish = (failure?: RawOutcome['failure'], message?: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ status, headers, body: Buffer.concat(chunks), bodyBytes, failure, message, elapsedMs: Math.round(performance.now() - started) });
      };
      const raw: string[] = ['Host', host];
      for (const [name, value] of request.headers) raw.push(name, value);
      if (request.body !== undefined) raw.push('Content-Length', String(request.body.length));
      // The deadline aborts the request, whatever state it is in.
      const abort = new AbortController();
      const timer = setTimeout(() => {
        finish('timeout', `no complete answer within ${deadlineMs} ms${status === undefined ? '' : ` (status ${status} arrived, the body did not end)`}`);
        abort.abort();
      }, deadlineMs);
      let outgoing: http.ClientRequest;
      try {
        outgoing = http.request({
          hostname: url.hostname,
          port: url.port,
          method: request.method,
          path: request.target,
          headers: raw,
          agent,
          setHost: false,
          signal: abort.signal,
        });
      } catch (error) {
        clearTimeout(timer);
        // The request itself cannot be written (a generator produced something node:http refuses).
        throw new Error(`node:http refuses to send this request: ${(error as Error).message}`);
      }
      outgoing.on('response', (response) => {
        status = response.statusCode;
        headers = response.headers;
        response.on('data', (chunk: Buffer) => {
          bodyBytes += chunk.length;
          if (bodyBytes <= maxBodyBytes) chunks.push(chunk);
        });
        response.on('end', () => finish());
        response.on('aborted', () => finish('body-cut', 'the response body was aborted'));
        response.on('error', (error) => finish('body-cut', error.message));
        response.on('close', () => {
          if (!response.complete) finish('body-cut', 'the connection closed before the body ended');
        });
      });
      outgoing.on('error', (error) =>
        finish(status === undefined ? 'no-answer' : 'body-cut', `${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}`.trim()),
      );
      outgoing.end(request.body);
    });
  }

  return { send, close: () => agent.destroy() };
}
