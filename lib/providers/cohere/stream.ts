import type { Transform } from 'node:stream';
import type { TokenUsage } from '../../core/usage';
import type { ChatChunkEmitter } from '../openai-format/chunk-emitter';
import { chatStreamTransform, sseEventDecoder, type SseEvent } from '../openai-format/provider-stream';
import type { CohereStreamEvent } from './api';
import { finishError, mapFinishReason } from './finish-reason';
import type { CohereMapping } from './request';
import { mapUsage } from './usage';

export interface CohereStreamOptions extends CohereMapping {
  includeUsage: boolean;
  onUsage(usage: TokenUsage): void;
}

/**
 * Cohere's v2 chat stream (server-sent events keyed by the `type` in their data) as OpenAI chunks:
 * - `message-start` → the completion id;
 * - `content-delta` text → `content`; thinking → `content_blocks` (strict API compliance off);
 * - `tool-plan-delta` → a thinking `content_blocks` delta at index 0 (strict off), else dropped;
 * - `tool-call-start` / `-delta` → a tool call with a stable index and its `arguments` pieces;
 * - `message-end` → usage and the finish reason, or for `ERROR`/`TIMEOUT` an error event;
 * - citations, `content-start`/`-end`, `tool-call-end` and `debug` carry nothing to relay.
 * @see https://docs.cohere.com/reference/chat-stream
 */
export function cohereStreamTransform(options: CohereStreamOptions): Transform {
  const toolIndex = new Map<number, number>();
  let planned = false;
  const onEvent = (raw: SseEvent, emitter: ChatChunkEmitter) => {
    if (raw.data === '[DONE]') return;
    const event = JSON.parse(raw.data) as CohereStreamEvent;
    switch (event.type) {
      case 'message-start':
        emitter.identify(event.id, undefined);
        return;
      case 'content-delta': {
        const content = event.delta?.message?.content;
        if (content?.text) emitter.text(content.text);
        else if (content?.thinking && !options.strictApiCompliance) {
          emitter.contentBlock({ index: event.index + (planned ? 1 : 0), type: 'thinking', thinking: content.thinking });
        }
        return;
      }
      case 'tool-plan-delta': {
        const plan = event.delta?.message?.tool_plan;
        if (plan && !options.strictApiCompliance) {
          planned = true;
          emitter.contentBlock({ index: 0, type: 'thinking', thinking: plan });
        }
        return;
      }
      case 'tool-call-start': {
        const call = event.delta?.message?.tool_calls;
        const index = toolIndex.size;
        toolIndex.set(event.index, index);
        emitter.toolCallStart(index, call?.id ?? '', call?.function?.name ?? '');
        if (call?.function?.arguments) emitter.toolCallArguments(index, call.function.arguments);
        return;
      }
      case 'tool-call-delta': {
        const index = toolIndex.get(event.index);
        const fragment = event.delta?.message?.tool_calls?.function?.arguments;
        if (index !== undefined && fragment) emitter.toolCallArguments(index, fragment);
        return;
      }
      case 'message-end': {
        const usage = mapUsage(event.delta?.usage);
        if (usage) emitter.usage(usage);
        const failure = finishError(event.delta?.finish_reason, event.delta?.error);
        if (failure) emitter.error(failure);
        else emitter.finish(mapFinishReason(event.delta?.finish_reason));
        return;
      }
      default:
        return;
    }
  };
  return chatStreamTransform({
    provider: 'cohere',
    model: options.model,
    includeUsage: options.includeUsage,
    decoder: sseEventDecoder(),
    onEvent,
    onUsage: options.onUsage,
  });
}
