/**
 * The Responses event stream the core answered with (a provider's own, or one translated from chat
 * or replayed from the cache), relayed with the gateway's stamp on the response it describes: its
 * id, time, `previous_response_id` and `background` are the gateway's, whatever the provider or the
 * cache said. Only the events that carry the whole response are read and written again; deltas go
 * through as they came.
 *
 * A stream the core ended with a chat-format error event (a provider stream that broke after it had
 * started, see provider-attempt.ts) ends here as OpenAI ends a failed one: `error`, then
 * `response.failed`.
 */
import { Transform } from 'node:stream';
import { eventData, eventName, SseEventSplitter } from '../wire/sse';
import type { ResponseObject } from '../providers/responses-format/types';

/** The fields of a response that are the gateway's, not the provider's. */
export type ResponseStamp = Pick<ResponseObject, 'id' | 'created_at' | 'previous_response_id' | 'background'>;

export function stampOf(response: ResponseObject): ResponseStamp {
  return { id: response.id, created_at: response.created_at, previous_response_id: response.previous_response_id, background: response.background };
}

const wholeResponseEvents = new Set([
  'response.created',
  'response.queued',
  'response.in_progress',
  'response.completed',
  'response.incomplete',
  'response.failed',
]);
const endEvents = new Set(['response.completed', 'response.incomplete', 'response.failed']);

type ErrorFields = { code?: string | null; type?: string; message?: string; param?: string | null };

/** The error fields of an event's data, found by `pick`; none when it cannot be read. */
function errorFieldsOf(data: string, pick: (parsed: Record<string, any>) => unknown): ErrorFields {
  try {
    const found = pick(JSON.parse(data));
    return found !== null && typeof found === 'object' ? (found as ErrorFields) : {};
  } catch {
    return {};
  }
}

export interface StreamEnd {
  /** The final response, stamped; undefined when the stream ended before it said how. */
  response?: ResponseObject;
  /** The id the answering provider gave the response, as its events carried it. */
  providerId?: string;
}

/**
 * `base` is the response as the gateway started it (see baseResponse): its stamp goes on every
 * response the events carry, and it stands in for one a failure must report before any came.
 * `onEnd` is called once, when the stream ends or is torn down.
 */
export function stampedEventStream(base: ResponseObject, onEnd: (end: StreamEnd) => void): Transform {
  const stamp = stampOf(base);
  const splitter = new SseEventSplitter();
  let providerId: string | undefined;
  let latest: ResponseObject | undefined;
  let ended = false;
  let sequence = 0;

  const end = (response?: ResponseObject) => {
    if (ended) return;
    ended = true;
    onEnd({ response, providerId });
  };

  const stamped = (response: ResponseObject): ResponseObject => {
    if (providerId === undefined && typeof response.id === 'string') providerId = response.id;
    return { ...response, ...stamp };
  };

  /** The `error` event the stream sent, when it sent one: what a `response.failed` made here reports. */
  let sentError: { code: string; message: string } | undefined;

  /** `response.failed` for a stream that ended without saying how; `error` first unless the stream sent one. */
  const failedEnd = (error: ErrorFields): string => {
    const code = sentError?.code ?? (error.code || error.type || 'server_error');
    const message = sentError?.message ?? (error.message || 'The model failed to answer.');
    const failed: ResponseObject = { ...(latest ?? base), ...stamp, status: 'failed', error: { code, message } };
    end(failed);
    let out = '';
    if (!sentError)
      out += `event: error\ndata: ${JSON.stringify({ type: 'error', sequence_number: sequence++, code, message, param: error.param ?? null })}\n\n`;
    return `${out}event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', sequence_number: sequence++, response: failed })}\n\n`;
  };

  /** A chat-format error event (see above) as OpenAI's `error` and `response.failed`. */
  const failedFrom = (data: string): string => failedEnd(errorFieldsOf(data, (parsed) => parsed.error));

  const relay = (event: string): string => {
    const name = eventName(event);
    const data = eventData(event) ?? '';
    if (data === '[DONE]') return '';
    if (name === undefined && data.startsWith('{"error"')) return failedFrom(data);
    sequence++;
    if (name === 'error' && !ended) {
      const error = errorFieldsOf(data, (parsed) => parsed);
      sentError = { code: error.code || error.type || 'server_error', message: error.message || 'The model failed to answer.' };
    }
    if (name === undefined || !wholeResponseEvents.has(name)) return `${event}\n\n`;
    const parsed = JSON.parse(data) as { type: string; response: ResponseObject };
    parsed.response = latest = stamped(parsed.response);
    if (endEvents.has(name)) end(parsed.response);
    return `event: ${name}\ndata: ${JSON.stringify(parsed)}\n\n`;
  };

  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      let out = '';
      try {
        for (const event of splitter.push(chunk)) out += relay(event);
      } catch (error) {
        callback(error as Error);
        return;
      }
      callback(null, out || undefined);
    },
    flush(callback) {
      let out = '';
      for (const event of splitter.end()) out += relay(event);
      if (!ended) out += failedEnd({ code: 'server_error', message: 'The model stream ended before the response was complete.' });
      callback(null, out);
    },
    destroy(error, callback) {
      // Torn down before its end (the client went away): what the id names is still recorded, as failed.
      if (!ended)
        end({
          ...(latest ?? base),
          ...stamp,
          status: 'failed',
          error: { code: 'server_error', message: 'The stream was closed before the response was complete.' },
        });
      callback(error);
    },
  });
}
