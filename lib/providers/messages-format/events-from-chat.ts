/**
 * A streamed Messages answer made from a streamed chat completion: the chat chunks every adapter
 * sends become Anthropic's event sequence, each written as `event: <type>\ndata: <json>\n\n`.
 *
 * - `message_start` (an empty message) and a `ping` with the first chunk.
 * - Thinking (`content_blocks` deltas) → a `thinking` block (`thinking_delta`, `signature_delta`);
 *   redacted thinking → a `redacted_thinking` block, whole.
 * - Text and refusal deltas → a `text` block (`text_delta`).
 * - Each chat tool call → a `tool_use` block, its argument fragments as `input_json_delta`.
 * - A thinking or text block is stopped when another block begins. Tool-use blocks stay open to
 *   the end, because chat streams may interleave the arguments of parallel calls; they are then
 *   stopped in order.
 * - The finish reason, usage and `[DONE]` (or the end of the bytes after a finish reason) end it with
 *   `message_delta` (stop reason and usage) and `message_stop`. An error chunk becomes an `error`
 *   event, as Anthropic reports a failure mid-stream; bytes that end with neither end with one too.
 * Input tokens are known only from the usage at the end, so `message_start` counts none and
 * `message_delta` carries them, as Anthropic's own newer streams do.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/streaming
 */
import { Transform } from 'node:stream';
import { newId } from '../../core/ids';
import { isPlainObject } from '../../core/plain-object';
import { sseEventDecoder } from '../openai-format/provider-stream';
import type { ChatCompletionChunk, ChunkDelta, FinishReason, Usage } from '../openai-format/types';
import { anthropicErrorEvent, anthropicErrorType } from './error-body';
import { stopReasonOf, usageFromChat, type MessageFrame } from './from-chat';

type OpenBlock = { kind: 'text'; index: number } | { kind: 'thinking'; index: number; chatIndex: number };

export function messagesEventStream(frame: MessageFrame): Transform {
  const decoder = sseEventDecoder();
  const tools = new Map<number, number>();
  let open: OpenBlock | undefined;
  let blockCount = 0;
  let started = false;
  let ended = false;
  let finishReason: FinishReason | null = null;
  let refused = false;
  let usage: Usage | undefined;
  let out = '';

  const emit = (type: string, fields: Record<string, unknown>) => {
    out += `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
  };

  const start = (model: unknown) => {
    if (started) return;
    started = true;
    const message = {
      id: frame.id,
      type: 'message',
      role: 'assistant',
      model: typeof model === 'string' && model ? model : frame.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    emit('message_start', { message });
    emit('ping', {});
  };

  const closeOpen = () => {
    if (open) emit('content_block_stop', { index: open.index });
    open = undefined;
  };

  const startBlock = (block: Record<string, unknown>): number => {
    const index = blockCount++;
    emit('content_block_start', { index, content_block: block });
    return index;
  };

  const text = (delta: string) => {
    if (open?.kind !== 'text') {
      closeOpen();
      open = { kind: 'text', index: startBlock({ type: 'text', text: '' }) };
    }
    emit('content_block_delta', { index: open.index, delta: { type: 'text_delta', text: delta } });
  };

  const thinking = (block: NonNullable<ChunkDelta['content_blocks']>[number]) => {
    if (block.type === 'redacted_thinking') {
      if (typeof block.data !== 'string') return;
      closeOpen();
      emit('content_block_stop', { index: startBlock({ type: 'redacted_thinking', data: block.data }) });
      return;
    }
    if ((block.type ?? 'thinking') !== 'thinking' || (!block.thinking && !block.signature)) return;
    if (open?.kind !== 'thinking' || open.chatIndex !== block.index) {
      closeOpen();
      open = { kind: 'thinking', index: startBlock({ type: 'thinking', thinking: '', signature: '' }), chatIndex: block.index };
    }
    if (block.thinking) emit('content_block_delta', { index: open.index, delta: { type: 'thinking_delta', thinking: block.thinking } });
    if (block.signature) emit('content_block_delta', { index: open.index, delta: { type: 'signature_delta', signature: block.signature } });
  };

  const toolCall = (call: NonNullable<ChunkDelta['tool_calls']>[number]) => {
    let index = tools.get(call.index);
    if (index === undefined) {
      closeOpen();
      index = startBlock({ type: 'tool_use', id: call.id || newId('toolu'), name: call.function?.name ?? '', input: {} });
      tools.set(call.index, index);
    }
    const fragment = call.function?.arguments;
    if (fragment) emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: fragment } });
  };

  const finish = () => {
    if (ended) return;
    ended = true;
    start(undefined);
    closeOpen();
    for (const index of [...tools.values()].sort((a, b) => a - b)) emit('content_block_stop', { index });
    const stopReason = refused && finishReason !== 'length' ? 'refusal' : stopReasonOf(finishReason);
    emit('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: usageFromChat(usage) });
    emit('message_stop', {});
  };

  const fail = (type: string, message: string) => {
    if (ended) return;
    ended = true;
    out += anthropicErrorEvent({ type: 'error', error: { type, message } });
  };

  const onData = (data: string) => {
    if (ended) return;
    if (data === '[DONE]') return finish();
    let chunk: ChatCompletionChunk & { error?: unknown };
    try {
      chunk = JSON.parse(data);
    } catch {
      return fail('api_error', 'The provider sent a stream chunk that is not JSON; the answer is incomplete.');
    }
    if (isPlainObject(chunk.error)) {
      const error = chunk.error as { type?: unknown; message?: unknown };
      const message = typeof error.message === 'string' ? error.message : 'The provider stream failed.';
      return fail(anthropicErrorType(undefined, typeof error.type === 'string' ? error.type : undefined), message);
    }
    start(chunk.model);
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const delta = choice.delta ?? {};
    for (const block of delta.content_blocks ?? []) thinking(block);
    if (typeof delta.content === 'string' && delta.content) text(delta.content);
    if (typeof delta.refusal === 'string' && delta.refusal) {
      refused = true;
      text(delta.refusal);
    }
    for (const call of delta.tool_calls ?? []) toolCall(call);
    if (choice.finish_reason) finishReason = choice.finish_reason;
  };

  const drain = (stream: Transform) => {
    if (out) stream.push(out);
    out = '';
  };

  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      for (const event of decoder.push(chunk)) onData(event.data);
      drain(this);
      callback();
    },
    flush(callback) {
      for (const event of decoder.end()) onData(event.data);
      if (finishReason !== null) finish();
      else fail('api_error', 'The provider closed its stream before the message was complete; the answer is incomplete.');
      drain(this);
      callback();
    },
  });
}
