import type { Transform } from 'node:stream';
import { GatewayError } from '../../core/errors';
import type { TokenUsage } from '../../core/usage';
import type { ChatChunkEmitter } from '../openai-format/chunk-emitter';
import { chatStreamTransform, sseEventDecoder, type SseEvent } from '../openai-format/provider-stream';
import type { MessagesUsage, RedactedThinkingBlock, StreamDelta, StreamEvent, TextBlock, ThinkingBlock, ToolUseBlock } from './api';
import { streamEventError } from './errors';
import { mapStopReason } from './finish-reason';
import type { AnthropicMapping } from './request';
import { mapUsage, mergeUsage } from './usage';

/** Handed to the event mapper when the bytes end, so a stream cut short can be told from a finished one. */
export const streamEnd = { type: 'stream_end' } as const;
export type StreamEnd = typeof streamEnd;

/** What one Anthropic content block (by its index) is being turned into. */
type BlockState =
  | { kind: 'text' }
  | { kind: 'tool'; toolIndex: number; argumentsSent: boolean; input: Record<string, unknown> }
  | { kind: 'json'; argumentsSent: boolean; input: Record<string, unknown> }
  | { kind: 'thinking'; blockIndex: number }
  | { kind: 'ignored' };

/**
 * Maps Anthropic stream events onto the OpenAI chunk emitter, one event at a time. Use one per stream.
 *
 * - `message_start` → the completion id and model; the input side of usage.
 * - text blocks: `text_delta` → content deltas.
 * - `tool_use` blocks → a tool call numbered in the order of tool_use blocks (not Anthropic's block
 *   index, which also counts text and thinking blocks); `input_json_delta` → argument fragments. A
 *   tool call whose input arrived whole (no fragments) gets it as one fragment (`{}` at least), so
 *   clients always receive parseable arguments.
 * - thinking and redacted thinking blocks → `content_blocks` deltas (`thinking`, then `signature`),
 *   with strict API compliance off only. Their `index` counts thinking and text blocks in order, the
 *   position they have in a non-streamed answer's `content_blocks`.
 * - the forced `response_format` tool → its JSON fragments as content deltas (any text before it is
 *   left out, as in a whole response).
 * - `message_delta` → the finish reason and usage (output tokens are cumulative).
 * - `error` → an error event (an `overloaded_error` keeps status 529), then `[DONE]`.
 * - `ping`, server-tool blocks, citations and unknown events are ignored, as Anthropic asks.
 * A stream that ends without `message_stop` or a stop reason becomes an error event.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/streaming
 */
export function anthropicEventMapper(mapping: AnthropicMapping): (event: StreamEvent | StreamEnd, emitter: ChatChunkEmitter) => void {
  const blocks = new Map<number, BlockState>();
  let toolCount = 0;
  let contentBlockCount = 0;
  let usage: MessagesUsage = {};
  let finished = false;
  let stopped = false;

  const startBlock = (block: { type: string }, emitter: ChatChunkEmitter): BlockState => {
    switch (block.type) {
      case 'text': {
        contentBlockCount++;
        // With response_format the content is the forced tool's JSON alone, as in a whole response.
        if (mapping.jsonTool) return { kind: 'ignored' };
        emitter.text((block as TextBlock).text ?? '');
        return { kind: 'text' };
      }
      case 'tool_use': {
        const use = block as ToolUseBlock;
        if (use.name === mapping.jsonTool) return { kind: 'json', argumentsSent: false, input: use.input ?? {} };
        const toolIndex = toolCount++;
        emitter.toolCallStart(toolIndex, use.id, use.name);
        return { kind: 'tool', toolIndex, argumentsSent: false, input: use.input ?? {} };
      }
      case 'thinking':
      case 'redacted_thinking': {
        const blockIndex = contentBlockCount++;
        if (mapping.strictApiCompliance) return { kind: 'ignored' };
        if (block.type === 'redacted_thinking')
          emitter.contentBlock({ index: blockIndex, type: 'redacted_thinking', data: (block as RedactedThinkingBlock).data });
        else if ((block as ThinkingBlock).thinking) emitter.contentBlock({ index: blockIndex, type: 'thinking', thinking: (block as ThinkingBlock).thinking });
        return { kind: 'thinking', blockIndex };
      }
      default:
        return { kind: 'ignored' };
    }
  };

  const delta = (state: BlockState | undefined, change: StreamDelta, emitter: ChatChunkEmitter): void => {
    if (!state) return;
    if (change.type === 'text_delta' && state.kind === 'text') emitter.text((change as { text: string }).text);
    else if (change.type === 'input_json_delta') {
      const fragment = (change as { partial_json: string }).partial_json;
      if ((state.kind !== 'tool' && state.kind !== 'json') || !fragment) return;
      state.argumentsSent = true;
      if (state.kind === 'json') emitter.text(fragment);
      else emitter.toolCallArguments(state.toolIndex, fragment);
    } else if (state.kind === 'thinking') {
      if (change.type === 'thinking_delta') {
        const thinking = (change as { thinking: string }).thinking;
        if (thinking) emitter.contentBlock({ index: state.blockIndex, type: 'thinking', thinking });
      } else if (change.type === 'signature_delta') {
        emitter.contentBlock({ index: state.blockIndex, type: 'thinking', signature: (change as { signature: string }).signature });
      }
    }
  };

  return (event, emitter) => {
    switch (event.type) {
      case 'message_start':
        emitter.identify(event.message?.id, event.message?.model);
        usage = mergeUsage(usage, event.message?.usage);
        emitter.usage(mapUsage(usage));
        return;
      case 'content_block_start':
        blocks.set(event.index, startBlock(event.content_block ?? { type: 'unknown' }, emitter));
        return;
      case 'content_block_delta':
        delta(blocks.get(event.index), event.delta ?? { type: 'unknown' }, emitter);
        return;
      case 'content_block_stop': {
        const state = blocks.get(event.index);
        if (state?.kind === 'tool' && !state.argumentsSent) emitter.toolCallArguments(state.toolIndex, JSON.stringify(state.input));
        else if (state?.kind === 'json' && !state.argumentsSent) emitter.text(JSON.stringify(state.input));
        blocks.delete(event.index);
        return;
      }
      case 'message_delta': {
        usage = mergeUsage(usage, event.usage);
        emitter.usage(mapUsage(usage));
        const reason = event.delta?.stop_reason;
        if (reason && !finished) {
          finished = true;
          emitter.finish(reason === 'tool_use' && mapping.jsonTool && toolCount === 0 ? 'stop' : mapStopReason(reason));
        }
        return;
      }
      case 'message_stop':
        stopped = true;
        if (!finished) {
          finished = true;
          emitter.finish('stop');
        }
        return;
      case 'error':
        emitter.error(streamEventError(mapping.provider, event.error));
        return;
      case 'stream_end':
        if (!stopped && !finished) {
          throw new GatewayError(502, `The ${mapping.provider} stream ended before the message was complete.`, {
            code: 'provider_stream_error',
            provider: mapping.provider,
          });
        }
        return;
      default:
        return;
    }
  };
}

/**
 * One SSE event's JSON. An untyped OpenAI-style `{"error":…}` event (as a proxy in front of
 * Anthropic may send) is read as the error it reports; `[DONE]` is ignored.
 */
export function parseSseEvent(event: SseEvent, provider: string): StreamEvent | undefined {
  if (event.data === '[DONE]') return undefined;
  const parsed = JSON.parse(event.data) as StreamEvent | { type?: undefined; error?: { message?: string; code?: string } };
  if (parsed?.type !== undefined) return parsed;
  const error = (parsed as { error?: { message?: string; code?: string } })?.error;
  if (error) throw new GatewayError(502, error.message ?? `The ${provider} stream failed.`, { code: error.code ?? 'provider_stream_error', provider });
  // An event without a type in its data: Anthropic names every event, so take the name.
  return event.event ? ({ ...(parsed as object), type: event.event } as StreamEvent) : undefined;
}

export interface AnthropicStreamOptions extends AnthropicMapping {
  /** The requested model, until `message_start` names the one that answers. */
  model: string;
  /** The client asked for `stream_options.include_usage`. */
  includeUsage: boolean;
  onUsage(usage: TokenUsage): void;
}

/** Anthropic SSE bytes in, OpenAI `chat.completion.chunk` SSE out. */
export function anthropicStreamTransform(options: AnthropicStreamOptions): Transform {
  const onEvent = anthropicEventMapper(options);
  return chatStreamTransform<SseEvent>({
    provider: options.provider,
    model: options.model,
    includeUsage: options.includeUsage,
    decoder: sseEventDecoder(),
    onEvent(event, emitter) {
      const parsed = parseSseEvent(event, options.provider);
      if (parsed) onEvent(parsed, emitter);
    },
    onEnd: (emitter) => onEvent(streamEnd, emitter),
    onUsage: options.onUsage,
  });
}
