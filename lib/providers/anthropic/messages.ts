/**
 * A Messages request sent to Anthropic as it is: the client's body (the model after the target's
 * overrides), relayed answer and events. Only the usage is read from them, and the end of a stream,
 * so that one cut short is not taken for a whole answer.
 * @see https://docs.anthropic.com/en/api/messages
 */
import { Transform } from 'node:stream';
import { GatewayError } from '../../core/errors';
import { isPlainObject } from '../../core/plain-object';
import type { TokenUsage } from '../../core/usage';
import { eventData, eventName, SseEventSplitter } from '../../wire/sse';
import type { MessagesUsage } from './api';
import type { PreparedCall, ProviderCall } from '../types';
import { readAnthropicError } from './errors';
import { mapUsage, mergeUsage } from './usage';

export function nativeMessagesCall(call: ProviderCall, url: URL, providerHeaders: Record<string, string>): PreparedCall {
  const provider = call.target.provider.name;
  const unchanged = (call.body.stream === true) === call.stream;
  const body = unchanged ? call.body : { ...call.body, stream: call.stream };
  return {
    url,
    headers: {
      ...call.forwardHeaders,
      'content-type': 'application/json',
      accept: call.stream ? 'text/event-stream' : 'application/json',
      ...providerHeaders,
    },
    body: unchanged && call.clientBytes ? call.clientBytes : JSON.stringify(body),
    readError: (status, bytes) => readAnthropicError(provider, status, bytes),
    readResponse(bytes) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(bytes.toString('utf8'));
      } catch {
        parsed = undefined;
      }
      if (!isPlainObject(parsed) || parsed.type !== 'message') {
        throw new GatewayError(502, `${provider} answered 200 without a message.`, { code: 'provider_response_unreadable', provider });
      }
      return { body: bytes, usage: isPlainObject(parsed.usage) ? mapUsage(parsed.usage as MessagesUsage) : undefined };
    },
    streamTransform: (onUsage) => relayMessagesStream(provider, onUsage),
  };
}

/**
 * Relays Anthropic's events byte for byte. `message_start` and `message_delta` are parsed for the
 * usage, reported as it grows (each report replaces the last), so a stream the client leaves early
 * is still counted for what it used; `message_stop` or an `error` event ends the answer. Bytes that
 * end before either get an `error` event of their own.
 */
export function relayMessagesStream(provider: string, onUsage: (usage: TokenUsage) => void): Transform {
  const splitter = new SseEventSplitter();
  let usage: MessagesUsage | undefined;
  let ended = false;
  const inspect = (events: string[]) => {
    for (const event of events) {
      const name = eventName(event);
      if (name === 'message_stop' || name === 'error') ended = true;
      if (name !== 'message_start' && name !== 'message_delta') continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(eventData(event) ?? '');
      } catch {
        continue;
      }
      if (!isPlainObject(parsed)) continue;
      const reported = name === 'message_start' && isPlainObject(parsed.message) ? parsed.message.usage : parsed.usage;
      if (!isPlainObject(reported)) continue;
      usage = mergeUsage(usage ?? {}, reported as MessagesUsage);
      onUsage(mapUsage(usage));
    }
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      inspect(splitter.push(chunk));
      callback(null, chunk);
    },
    flush(callback) {
      inspect(splitter.end());
      if (!ended) {
        const error = {
          type: 'error',
          error: { type: 'api_error', message: `${provider} closed its stream before the message ended; the answer is incomplete.` },
        };
        this.push(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
      }
      callback();
    },
  });
}
