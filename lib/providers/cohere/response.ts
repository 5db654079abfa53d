import { GatewayError } from '../../core/errors';
import type { TokenUsage } from '../../core/usage';
import { chatCompletion } from '../openai-format/chunk-emitter';
import type { AssistantMessage, ToolCall } from '../openai-format/types';
import type { CohereChatResponse, CohereToolCall } from './api';
import { finishError, mapFinishReason } from './finish-reason';
import type { CohereMapping } from './request';
import { mapUsage } from './usage';

/** A JSON body from Cohere, or a 502 saying it was not one. */
export function parseCohereJson<T>(bytes: Buffer): T {
  try {
    return JSON.parse(bytes.toString('utf8')) as T;
  } catch {
    throw new GatewayError(502, 'cohere answered with a body that is not JSON.', { code: 'provider_response_unreadable', provider: 'cohere' });
  }
}

/** A Cohere tool call in OpenAI's shape (`arguments` is a JSON string in both). */
export function toOpenAIToolCall(call: CohereToolCall): ToolCall {
  const args = call.function?.arguments;
  return {
    id: call.id,
    type: 'function',
    function: { name: call.function?.name ?? '', arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) },
  };
}

/**
 * A Cohere chat response as a `chat.completion`: the text blocks joined as `content` (null when the
 * turn only calls tools), `tool_calls`, the finish reason and usage. With strict API compliance
 * off, the tool plan and thinking blocks come back as `content_blocks` (thinking), followed by the
 * text; with it on they are left out. Citations are not returned. A generation that ended in
 * `ERROR` or `TIMEOUT` is an error, not an answer.
 * @see https://docs.cohere.com/reference/chat#response
 */
export function readChatResponse(bytes: Buffer, mapping: CohereMapping): { body: string; usage?: TokenUsage } {
  const response = parseCohereJson<CohereChatResponse>(bytes);
  const failure = finishError(response.finish_reason, undefined);
  if (failure) throw failure;
  const message: AssistantMessage = { role: 'assistant', content: null };
  const blocks: NonNullable<AssistantMessage['content_blocks']> = [];
  if (response.message?.tool_plan) blocks.push({ type: 'thinking', thinking: response.message.tool_plan });
  let text = '';
  for (const block of response.message?.content ?? []) {
    if (block.type === 'text') {
      text += block.text;
      blocks.push({ type: 'text', text: block.text });
    } else if (block.type === 'thinking') blocks.push({ type: 'thinking', thinking: block.thinking });
  }
  const toolCalls = response.message?.tool_calls ?? [];
  if (toolCalls.length) message.tool_calls = toolCalls.map(toOpenAIToolCall);
  message.content = text || (toolCalls.length ? null : '');
  if (!mapping.strictApiCompliance && blocks.some((block) => block.type === 'thinking')) message.content_blocks = blocks;
  const usage = mapUsage(response.usage);
  const completion = chatCompletion({ id: response.id, model: mapping.model, message, finishReason: mapFinishReason(response.finish_reason), usage });
  return { body: JSON.stringify(completion), usage };
}
