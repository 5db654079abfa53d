/**
 * The `fetch` the MCP SDK's transport is given, so every request to an MCP server goes through the
 * gateway's outbound client: the address guard at connect time (private addresses refused unless
 * allow-listed), no redirects followed, and no decompression. It also bounds what a server can make
 * the gateway read: all the answers of one metadata fetch together hold at most `maxBytes`.
 */
import type { OutboundResponse } from '../outbound/http-client';
import { sendOutbound } from '../outbound/http-client';

/** What the fetches of one connection saw: whether any answer arrived, and how many bytes were read. */
export interface FetchRecord {
  /** HTTP answers received (heads), whatever their status. */
  answers: number;
  bytes: number;
}

/** A server answered with a redirect: the gateway does not follow one, as on every outbound call. */
export class McpRedirectError extends Error {
  constructor(readonly status: number) {
    super(`the server answered ${status} (a redirect); the gateway follows no redirects: register the URL it points to`);
    this.name = 'McpRedirectError';
  }
}

/** The server's answers went past the byte budget. */
export class McpTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the server's answers went past ${Math.round(maxBytes / 1_048_576)} MB in all`);
    this.name = 'McpTooLargeError';
  }
}

/** Statuses whose Response may have no body. */
const bodiless = new Set([101, 204, 205, 304]);

export function guardedFetch(record: FetchRecord, maxBytes: number) {
  return async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const body = init?.body;
    if (body !== undefined && body !== null && typeof body !== 'string') throw new TypeError('MCP requests carry JSON text bodies only.');
    const response = await sendOutbound({
      url,
      method: (init?.method ?? 'GET').toUpperCase(),
      headers,
      body: body ?? undefined,
      target: 'the MCP server',
      signal: init?.signal ?? undefined,
    });
    record.answers++;
    if (response.status >= 300 && response.status < 400) {
      response.body.destroy();
      throw new McpRedirectError(response.status);
    }
    const status = response.status < 200 || response.status > 599 ? 502 : response.status;
    return new Response(bodiless.has(status) ? null : bodyStream(response, record, maxBytes), { status, headers: webHeaders(response.headers) });
  };
}

/** The body as a web stream, counted against the budget as it is read. */
function bodyStream(response: OutboundResponse, record: FetchRecord, maxBytes: number): ReadableStream<Uint8Array> {
  const chunks = response.body[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await chunks.next();
      if (done) return controller.close();
      const chunk = value as Buffer;
      record.bytes += chunk.length;
      if (record.bytes > maxBytes) {
        response.body.destroy();
        controller.error(new McpTooLargeError(maxBytes));
        return;
      }
      controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
    },
    cancel() {
      response.body.destroy();
    },
  });
}

function webHeaders(raw: OutboundResponse['headers']): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) {
      try {
        headers.append(name, one);
      } catch {
        // A header Headers will not hold (e.g. a byte it refuses) is left out; nothing the client needs looks like that.
      }
    }
  }
  return headers;
}
