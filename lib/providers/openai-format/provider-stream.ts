import { Transform } from 'node:stream';
import { GatewayError } from '../../core/errors';
import { SseEventSplitter } from '../../wire/sse';
import type { TokenUsage } from '../../core/usage';
import { ChatChunkEmitter, newCompletionId } from './chunk-emitter';

/** Turns provider stream bytes into whole events, however the bytes are cut across reads. */
export interface StreamDecoder<Event> {
  push(chunk: Buffer): Event[];
  end(): Event[];
}

export interface SseEvent {
  event?: string;
  data: string;
}

/** Server-sent events: the `event:` name (if any) and the joined `data:` lines; comments dropped. */
export function sseEventDecoder(): StreamDecoder<SseEvent> {
  const splitter = new SseEventSplitter();
  const parse = (raw: string): SseEvent | undefined => {
    let name: string | undefined;
    let data: string | undefined;
    for (const line of raw.split('\n')) {
      if (line.startsWith('data:')) {
        const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
        data = data === undefined ? value : `${data}\n${value}`;
      } else if (line.startsWith('event:')) {
        name = line.slice(line.charCodeAt(6) === 32 ? 7 : 6);
      }
    }
    return data === undefined ? undefined : { event: name, data };
  };
  const parseAll = (raws: string[]) => raws.map(parse).filter((event): event is SseEvent => event !== undefined);
  return { push: (chunk) => parseAll(splitter.push(chunk)), end: () => parseAll(splitter.end()) };
}

export interface ChatStreamOptions<Event> {
  provider: string;
  model: string;
  includeUsage: boolean;
  decoder: StreamDecoder<Event>;
  /** Maps one provider event onto the emitter. Throwing ends the stream with an error event. */
  onEvent(event: Event, emitter: ChatChunkEmitter): void;
  /**
   * Called when the provider's bytes end, before the stream is closed: an adapter whose format has
   * a terminal event throws here when it never came (the stream was cut short).
   */
  onEnd?(emitter: ChatChunkEmitter): void;
  onUsage(usage: TokenUsage): void;
}

/**
 * A Transform from a provider's stream to OpenAI chat chunks: decoded event by event and emitted as
 * it goes. A provider event the adapter cannot read, or an `onEnd` that finds the stream cut short,
 * becomes an error event followed by `[DONE]`.
 */
export function chatStreamTransform<Event>(options: ChatStreamOptions<Event>): Transform {
  let emitter: ChatChunkEmitter;
  const guarded = (step: () => void) => {
    try {
      step();
    } catch (error) {
      emitter.error(
        error instanceof GatewayError
          ? error
          : new GatewayError(502, `Could not read the ${options.provider} stream: ${(error as Error).message}`, {
              code: 'provider_stream_error',
              provider: options.provider,
            }),
      );
    }
  };
  const handle = (events: Event[]) => {
    for (const event of events) {
      if (emitter.isEnded) return;
      guarded(() => options.onEvent(event, emitter));
    }
  };
  const transform = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      handle(options.decoder.push(chunk));
      callback();
    },
    flush(callback) {
      handle(options.decoder.end());
      if (options.onEnd && !emitter.isEnded) guarded(() => options.onEnd!(emitter));
      emitter.end();
      callback();
    },
  });
  emitter = new ChatChunkEmitter({
    id: newCompletionId(),
    model: options.model,
    includeUsage: options.includeUsage,
    onUsage: options.onUsage,
    push: (text) => transform.push(text),
  });
  return transform;
}
