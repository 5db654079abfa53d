import { StringDecoder } from 'node:string_decoder';

/**
 * Splits a server-sent-event byte stream into whole events, however the bytes are cut across reads.
 * Accepts `\n\n`, `\r\n\r\n` and `\r\r` separators; yields each event's text without the separator.
 */
export class SseEventSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  push(chunk: Buffer): string[] {
    let text = this.pending + this.decoder.write(chunk);
    let heldCr = '';
    if (text.includes('\r')) {
      // A CR at the end may be the first half of a CRLF cut across reads: decide on the next read.
      if (text.endsWith('\r')) {
        heldCr = '\r';
        text = text.slice(0, -1);
      }
      text = text.replace(/\r\n?/g, '\n');
    }
    const events = text.split('\n\n');
    this.pending = events.pop()! + heldCr;
    const complete: string[] = [];
    for (let event of events) {
      // Extra blank lines between events dispatch nothing.
      if (event.charCodeAt(0) === 10) event = event.replace(/^\n+/, '');
      if (event.length > 0) complete.push(event);
    }
    return complete;
  }

  /** True when no partial event is held from earlier reads. */
  isEmpty(): boolean {
    return this.pending.length === 0;
  }

  /** The last event when the stream ended without a blank line after it. */
  end(): string[] {
    const rest = (this.pending + this.decoder.end()).replace(/\r\n?/g, '\n').replace(/^\n+|\n+$/g, '');
    this.pending = '';
    return rest ? [rest] : [];
  }
}

/**
 * The data of an event: its `data:` lines joined by `\n` (one optional space after the colon
 * removed), or undefined for an event without data (a comment or keep-alive).
 */
export function eventData(event: string): string | undefined {
  if (event.startsWith('data: ') && !event.includes('\n')) return event.slice(6);
  let data: string | undefined;
  for (const line of event.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    data = data === undefined ? value : `${data}\n${value}`;
  }
  return data;
}

export const sseDone = 'data: [DONE]\n\n';

export function sseData(json: string): string {
  return `data: ${json}\n\n`;
}

/** The `event:` field of an event (one optional space after the colon removed), or undefined. */
export function eventName(event: string): string | undefined {
  let start: number;
  if (event.startsWith('event:')) start = 6;
  else {
    const line = event.indexOf('\nevent:');
    if (line < 0) return undefined;
    start = line + 7;
  }
  if (event.charCodeAt(start) === 32) start++;
  const end = event.indexOf('\n', start);
  return event.slice(start, end < 0 ? undefined : end);
}

/**
 * The `type` an event's JSON data opens with (`{"type":"…"`, as OpenAI writes Responses events),
 * read without parsing it; undefined when the data does not open so.
 */
export function leadingDataType(data: string): string | undefined {
  const match = /^\{\s*"type"\s*:\s*"([^"]+)"/.exec(data);
  return match?.[1];
}
