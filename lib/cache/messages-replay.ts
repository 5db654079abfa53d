import type { Readable } from 'node:stream';
import { isPlainObject } from '../core/plain-object';
import { readableOfEvents, textPieces } from './sse-replay';

type Json = Record<string, unknown>;

/**
 * A stored Anthropic message as the event stream a streamed request would have received, in
 * Anthropic's order: `message_start` (the message without content, stop reason or output tokens),
 * `ping`, then per block `content_block_start` (its text or input empty), its deltas (text and
 * thinking in runs of a few tokens, a tool's input as JSON fragments, the signature whole) and
 * `content_block_stop`; then `message_delta` with the stop reason and usage, and `message_stop`.
 * Putting the events back together (as clients and `captureStream` do) gives the stored message.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/streaming
 */
export function replayMessageAsSse(message: Json): Readable {
  return readableOfEvents(messageEvents(message));
}

/** The whole replay as SSE text, for a message small enough to hold it. */
export function replayMessageAsSseText(message: Json): string {
  let text = '';
  for (const event of messageEvents(message)) text += event;
  return text;
}

const emit = (type: string, fields: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;

function* messageEvents(message: Json): Generator<string> {
  const usage = isPlainObject(message.usage) ? message.usage : {};
  const start = { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 0 } };
  yield emit('message_start', { message: start });
  yield emit('ping', {});
  const content = Array.isArray(message.content) ? message.content : [];
  for (const [index, block] of content.entries()) yield* blockEvents(index, block);
  yield emit('message_delta', { delta: { stop_reason: message.stop_reason ?? null, stop_sequence: message.stop_sequence ?? null }, usage });
  yield emit('message_stop', {});
}

function* blockEvents(index: number, block: unknown): Generator<string> {
  if (!isPlainObject(block)) {
    yield emit('content_block_start', { index, content_block: block });
  } else if (block.type === 'text' && typeof block.text === 'string') {
    yield emit('content_block_start', { index, content_block: { ...block, text: '' } });
    for (const piece of textPieces(block.text)) yield emit('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
  } else if (block.type === 'thinking' && typeof block.thinking === 'string') {
    yield emit('content_block_start', { index, content_block: { ...block, thinking: '', signature: '' } });
    for (const piece of textPieces(block.thinking)) yield emit('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } });
    if (typeof block.signature === 'string' && block.signature) {
      yield emit('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } });
    }
  } else if ((block.type === 'tool_use' || block.type === 'server_tool_use') && block.input !== undefined) {
    yield emit('content_block_start', { index, content_block: { ...block, input: {} } });
    for (const piece of textPieces(JSON.stringify(block.input))) {
      yield emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
    }
  } else {
    yield emit('content_block_start', { index, content_block: block });
  }
  yield emit('content_block_stop', { index });
}
