/**
 * A Responses request sent to a provider that runs OpenAI's Responses API itself (openai,
 * azure-openai): the body it is sent, and how its answer is read. The answer is the provider's
 * response object, or its event stream, relayed as it came; only the usage is read from it.
 * @see https://platform.openai.com/docs/api-reference/responses/create
 */
import { Transform } from 'node:stream';
import { GatewayError } from '../../core/errors';
import { isPlainObject } from '../../core/plain-object';
import { tokenUsage, type TokenUsage } from '../../core/usage';
import { eventData, eventName, leadingDataType, SseEventSplitter } from '../../wire/sse';
import type { JsonObject, PreparedCall, ProviderCall } from '../types';
import { linkFor } from './chain';

export interface NativeResponsesOptions {
  /** Names the provider in errors. */
  provider: string;
  url: URL;
  /** The provider's authentication headers (sent after the client's forwarded ones, so they win). */
  authHeaders: Record<string, string>;
  readError: PreparedCall['readError'];
}

/** The provider call of a native Responses request. */
export function nativeResponsesCall(call: ProviderCall, options: NativeResponsesOptions): PreparedCall {
  const body = nativeResponsesBody(call);
  return {
    url: options.url,
    headers: {
      ...call.forwardHeaders,
      'content-type': 'application/json',
      accept: call.stream ? 'text/event-stream' : 'application/json',
      ...options.authHeaders,
    },
    body: body === call.body && call.clientBytes ? call.clientBytes : JSON.stringify(body),
    readError: options.readError,
    readResponse(bytes) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(bytes.toString('utf8'));
      } catch {
        throw new GatewayError(502, `${options.provider} answered with a body that is not JSON.`, {
          code: 'provider_response_unreadable',
          provider: options.provider,
        });
      }
      return { body: bytes, usage: isPlainObject(parsed) ? usageFromResponses(parsed.usage) : undefined };
    },
    streamTransform: (onUsage) => relayResponsesStream({ provider: options.provider, onUsage }),
  };
}

/**
 * Item types a provider runs itself (its search, its sandbox): such an item stands for the
 * provider's own record of the call and is not valid input without its id, which only that provider
 * knows. What the model made of the result follows it in the conversation as a message.
 */
const providerRunItems = new Set(['web_search_call', 'file_search_call', 'code_interpreter_call', 'image_generation_call']);

/**
 * The request body for the provider. `call.body.input` holds the whole conversation, its first
 * `historyLength` items the earlier turns. When the provider holds the earlier response itself (the
 * chain's link is valid for this target), it gets the provider's own id and the new items only, so
 * its stored state (reasoning included) carries over. Otherwise it gets the whole conversation with
 * the earlier items made portable. The same object as `call.body` when nothing changed.
 */
export function nativeResponsesBody(call: ProviderCall): JsonObject {
  const source = call.body;
  const historyLength = call.responsesChain?.historyLength ?? 0;
  const link = linkFor(call.responsesChain, call.target);
  const wantsStream = source.stream === true;
  const unchanged =
    historyLength === 0 &&
    link === undefined &&
    wantsStream === call.stream &&
    source.background === undefined &&
    source.previous_response_id === undefined &&
    (call.stream || source.stream_options === undefined);
  if (unchanged) return source;

  // `background` is the gateway's to run (its worker makes this call and waits for the answer), and
  // the gateway's own `previous_response_id` means nothing to the provider.
  const { background: _background, previous_response_id: _previous, stream: _stream, stream_options: streamOptions, ...body } = source;
  const input = source.input;
  if (Array.isArray(input) && historyLength > 0) {
    if (link) {
      body.previous_response_id = link.providerResponseId;
      body.input = input.slice(historyLength);
    } else {
      body.input = [...portableHistory(input.slice(0, historyLength)), ...input.slice(historyLength)];
    }
  } else if (link) {
    body.previous_response_id = link.providerResponseId;
  }
  if (call.stream) {
    body.stream = true;
    if (streamOptions !== undefined) body.stream_options = streamOptions;
  }
  return body;
}

/**
 * Earlier items as any provider can take them: without the ids and statuses they were given (the
 * gateway's, or another provider's, which this provider would look up and not find), without
 * reasoning that has no `encrypted_content` (a provider can only take back its own reasoning, and
 * only in that form), and without calls the provider ran itself (see {@link providerRunItems}).
 */
function portableHistory(items: readonly unknown[]): unknown[] {
  const portable: unknown[] = [];
  for (const item of items) {
    if (!isPlainObject(item)) {
      portable.push(item);
      continue;
    }
    if (item.type === 'reasoning' && (typeof item.encrypted_content !== 'string' || item.encrypted_content === '')) continue;
    if (typeof item.type === 'string' && providerRunItems.has(item.type)) continue;
    const { id: _id, status: _status, ...rest } = item;
    portable.push(rest);
  }
  return portable;
}

/** The Responses API's `usage` in the gateway's token-usage shape (chat's names). */
export function usageFromResponses(usage: unknown): TokenUsage | undefined {
  if (!isPlainObject(usage)) return undefined;
  return tokenUsage({
    prompt: usage.input_tokens,
    completion: usage.output_tokens,
    total: usage.total_tokens,
    promptDetails: numericFields(usage.input_tokens_details),
    completionDetails: numericFields(usage.output_tokens_details),
  });
}

function numericFields(value: unknown): Record<string, number> | undefined {
  if (!isPlainObject(value)) return undefined;
  const fields: Record<string, number> = {};
  for (const [name, count] of Object.entries(value)) if (typeof count === 'number') fields[name] = count;
  return fields;
}

/** The events that end a Responses stream; each carries the final response with its usage. */
const terminalEvents = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export interface ResponsesRelayOptions {
  /** Names the provider in the error event of a stream cut short. */
  provider: string;
  onUsage(usage: TokenUsage): void;
}

/**
 * Relays a provider's Responses event stream byte for byte, and reads the usage of its terminal
 * event. Only the terminal event is parsed: the others (mostly deltas) are recognised by their
 * type, from the `event:` line OpenAI sends first or else from the start of their data. A stream
 * that ends without a terminal event was cut short: an `error` event says so, as the last event,
 * so a client does not take what came for the whole answer.
 */
export function relayResponsesStream(options: ResponsesRelayOptions): Transform {
  const splitter = new SseEventSplitter();
  let ended = false;
  let lastEvent = '';
  const inspect = (events: string[]) => {
    for (const event of events) {
      lastEvent = event;
      if (ended || !terminalEvents.has(eventType(event) ?? '')) continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(eventData(event) ?? '');
      } catch {
        continue;
      }
      const response = isPlainObject(parsed) && isPlainObject(parsed.response) ? parsed.response : undefined;
      if (!response) continue;
      ended = true;
      const usage = usageFromResponses(response.usage);
      if (usage) options.onUsage(usage);
    }
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      inspect(splitter.push(chunk));
      callback(null, chunk);
    },
    flush(callback) {
      inspect(splitter.end());
      if (!ended) this.push(cutShortEvent(options.provider, lastEvent));
      callback();
    },
  });
}

/** The `error` event after a stream that ended without a terminal event, numbered after the last event. */
function cutShortEvent(provider: string, lastEvent: string): string {
  const last = /"sequence_number"\s*:\s*(\d+)/.exec(lastEvent);
  const error = {
    type: 'error',
    code: 'provider_stream_error',
    message: `${provider} closed its stream before the response ended (no response.completed, response.incomplete or response.failed); the answer is incomplete.`,
    param: null,
    sequence_number: last ? Number(last[1]) + 1 : 0,
  };
  return `event: error\ndata: ${JSON.stringify(error)}\n\n`;
}

/** The type of a Responses event: its `event:` name, or else the `type` its data opens with. */
export function eventType(event: string): string | undefined {
  return eventName(event) ?? leadingDataType(eventData(event) ?? '');
}
