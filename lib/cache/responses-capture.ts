import { isPlainObject } from '../core/plain-object';
import { eventData, eventName, leadingDataType } from '../wire/sse';
import { BoundedEventReader } from './bounded-event-reader';

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
export class FinalResponseReader extends BoundedEventReader {
  private response: Json | undefined;

  /** The response the stream ended with, or undefined. */
  end(): Json | undefined {
    this.readRest();
    return this.failed ? undefined : this.response;
  }

  protected dropHeld(): void {
    this.response = undefined;
  }

  protected event(event: string): void {
    if (this.failed || this.response) return;
    const name = eventName(event);
    // Deltas, added and done events: most of the stream, never parsed.
    if (name !== undefined && !answeringEvents.has(name) && !failingEvents.has(name)) return;
    const data = eventData(event);
    if (data === undefined) return;
    const type = name === undefined ? leadingDataType(data) : undefined;
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
