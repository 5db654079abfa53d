import { isPlainObject } from '../core/plain-object';
import { eventData, SseEventSplitter } from '../wire/sse';

type Json = Record<string, unknown>;

/** The statuses of a response that has its answer: what the cache keeps and replays. */
const finishedStatuses = new Set(['completed', 'incomplete']);

/** Whether a response object is finished with an answer (not queued, in progress, failed or cancelled). */
export function isFinishedResponse(response: unknown): boolean {
  return isPlainObject(response) && finishedStatuses.has(response.status as string);
}

/** The events that end a Responses stream with its answer: they carry the whole response. */
const answeringEvents = new Set(['response.completed', 'response.incomplete']);

/** The events that end it without one. */
const failingEvents = new Set(['error', 'response.failed']);

/**
 * Reads a Responses event stream for the response it ends with. Unlike a chat stream, whose answer
 * has to be put together from its deltas, a Responses stream repeats the whole response in its last
 * event (`response.completed` or `response.incomplete`), so only that event is parsed: the others
 * are recognised by their name and passed over. A stream that ends in `error` or `response.failed`,
 * or without a last event, has no answer.
 */
export class FinalResponseReader {
  private splitter: SseEventSplitter | undefined = new SseEventSplitter();
  private response: Json | undefined;
  private failed = false;
  /** Bytes received since the last complete event: bounds an event that never ends, the last one included. */
  private pending = 0;

  /** `limit`: the most characters of the last event kept (see `CaptureOptions.limit`). */
  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    if (!this.splitter) return;
    this.pending += chunk.length;
    this.guard(() => {
      const events = this.splitter!.push(chunk);
      if (events.length > 0) this.pending = 0;
      for (const event of events) this.event(event);
      if (this.pending > this.limit) this.fail();
    });
  }

  /** The response the stream ended with, or undefined. */
  end(): Json | undefined {
    if (this.splitter) this.guard(() => this.splitter!.end().forEach((event) => this.event(event)));
    this.splitter = undefined;
    return this.failed ? undefined : this.response;
  }

  private guard(step: () => void): void {
    try {
      step();
    } catch {
      this.fail();
    }
  }

  private fail(): void {
    this.failed = true;
    this.splitter = undefined;
    this.response = undefined;
  }

  private event(event: string): void {
    if (this.failed || this.response) return;
    const name = eventName(event);
    // Deltas, added and done events: most of the stream, never parsed.
    if (name !== undefined && !answeringEvents.has(name) && !failingEvents.has(name)) return;
    const data = eventData(event);
    if (data === undefined) return;
    const type = name === undefined ? dataType(data) : undefined;
    if (type !== undefined && !answeringEvents.has(type) && !failingEvents.has(type)) return;
    if (data.length > this.limit) return this.fail();
    // The data's own `type` decides (OpenAI's clients read only the data); a stream whose event lines
    // and types disagree is no stream OpenAI or the gateway writes.
    const parsed: unknown = JSON.parse(data);
    if (!isPlainObject(parsed) || typeof parsed.type !== 'string' || failingEvents.has(parsed.type)) return this.fail();
    if (!answeringEvents.has(parsed.type)) return;
    if (!isPlainObject(parsed.response)) return this.fail();
    this.response = parsed.response;
    // Nothing after the last event matters: let go of the splitter and what it holds.
    this.splitter = undefined;
  }
}

/** The `event:` field of an event (one optional space after the colon removed), or undefined. */
function eventName(event: string): string | undefined {
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
 * The `type` of an event's data without parsing it, when it comes first as OpenAI writes it
 * (`{"type":"…",`); otherwise undefined, and the data is parsed to know.
 */
function dataType(data: string): string | undefined {
  const prefix = '{"type":"';
  if (!data.startsWith(prefix)) return undefined;
  const end = data.indexOf('"', prefix.length);
  return end < 0 ? undefined : data.slice(prefix.length, end);
}
