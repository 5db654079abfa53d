/**
 * SSE test helpers following the HTML event-stream rules: lines end in CRLF, LF or CR; lines starting
 * with ':' are comments; `field: value` with one optional space after the colon; several `data` lines
 * join with '\n'; a blank line dispatches the event (only when it had a data field); an unterminated
 * event at end of stream is discarded; a leading BOM is ignored.
 */

export interface SseEvent {
  event?: string;
  data: string;
  id?: string;
}

export interface TimedSseEvent extends SseEvent {
  /** `performance.now()` when the bytes completing this event arrived. */
  receivedAt: number;
}

/** Incremental parser: feed text pieces (split anywhere, even inside a CRLF), get complete events. */
export class SseParser {
  private buf = '';
  private pendingCr = false;
  private started = false;
  private data: string[] = [];
  private hasData = false;
  private event: string | undefined;
  private id: string | undefined;

  push(text: string): SseEvent[] {
    const out: SseEvent[] = [];
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.pendingCr && text.length > 0) {
      this.pendingCr = false;
      if (text.startsWith('\n')) text = text.slice(1);
    }
    let s = this.buf + text;
    let start = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c !== 0x0a && c !== 0x0d) continue;
      this.line(s.slice(start, i), out);
      if (c === 0x0d) {
        if (i + 1 < s.length) {
          if (s.charCodeAt(i + 1) === 0x0a) i++;
        } else this.pendingCr = true;
      }
      start = i + 1;
    }
    s = s.slice(start);
    this.buf = s;
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.hasData) {
        const ev: SseEvent = { data: this.data.join('\n') };
        if (this.event !== undefined) ev.event = this.event;
        if (this.id !== undefined) ev.id = this.id;
        out.push(ev);
      }
      this.data = [];
      this.hasData = false;
      this.event = undefined;
      return;
    }
    if (line.charCodeAt(0) === 0x3a /* : */) return;
    const colon = line.indexOf(':');
    let field: string;
    let value: string;
    if (colon === -1) {
      field = line;
      value = '';
    } else {
      field = line.slice(0, colon);
      value = line.slice(colon + 1);
      if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    }
    switch (field) {
      case 'data':
        this.data.push(value);
        this.hasData = true;
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.id = value;
        break;
      default:
        break; // retry and unknown fields are ignored
    }
  }
}

/** Parses a complete SSE body. */
export function parseSse(text: string): SseEvent[] {
  return new SseParser().push(text);
}

export interface CollectedSse {
  status: number;
  headers: Headers | Record<string, unknown>;
  /** The whole body as text. */
  text: string;
  events: TimedSseEvent[];
  /** JSON-parsed `data` of every event except `[DONE]` (undefined where it was not JSON). */
  json: unknown[];
  /** Whether a `data: [DONE]` event arrived. */
  done: boolean;
  /** Whether `[DONE]` was the last event. */
  doneLast: boolean;
}

type BodySource = AsyncIterable<Uint8Array> | ReadableStream<Uint8Array> | null | undefined;

/**
 * Reads a streamed response (fetch `Response`, or anything with an async-iterable `body` such as
 * undici `request()`'s result) to the end, parsing events as they arrive.
 */
export async function collectSse(response: Response | { statusCode?: number; status?: number; headers?: unknown; body: BodySource }): Promise<CollectedSse> {
  const parser = new SseParser();
  const decoder = new TextDecoder('utf-8');
  const events: TimedSseEvent[] = [];
  let text = '';
  const take = (piece: string): void => {
    text += piece;
    const at = performance.now();
    for (const e of parser.push(piece)) events.push({ ...e, receivedAt: at });
  };
  const body = response.body as BodySource;
  if (body) {
    const iterable: AsyncIterable<Uint8Array> =
      Symbol.asyncIterator in body ? (body as AsyncIterable<Uint8Array>) : readableToIterable(body as ReadableStream<Uint8Array>);
    for await (const chunk of iterable) {
      take(decoder.decode(typeof chunk === 'string' ? Buffer.from(chunk) : chunk, { stream: true }));
    }
  }
  take(decoder.decode());
  const json: unknown[] = [];
  let done = false;
  for (const e of events) {
    if (e.data === '[DONE]') {
      done = true;
      continue;
    }
    try {
      json.push(JSON.parse(e.data));
    } catch {
      json.push(undefined);
    }
  }
  const r = response as { status?: number; statusCode?: number; headers?: unknown };
  return {
    status: r.status ?? r.statusCode ?? 0,
    headers: (r.headers ?? {}) as Headers | Record<string, unknown>,
    text,
    events,
    json,
    done,
    doneLast: events.length > 0 && events[events.length - 1].data === '[DONE]',
  };
}

async function* readableToIterable(stream: ReadableStream<Uint8Array>): AsyncIterable<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}
