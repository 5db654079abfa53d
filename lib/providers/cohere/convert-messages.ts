import { badRequest } from '../../core/errors';
import { textOf } from '../openai-format/request-helpers';
import type { ChatMessage, ContentPart, ToolCall } from '../openai-format/types';
import type { CohereContent, CohereMessage, CohereToolCall } from './api';

/**
 * OpenAI messages as Cohere v2 messages. The roles are the same (`developer` becomes `system`), so
 * the order is kept as it is: system messages stay where they were, and each tool result stays a
 * `tool` message with its `tool_call_id`. A message's `name` has no Cohere counterpart and is left
 * out; `function` messages (OpenAI's deprecated form) are a 400.
 * @see https://docs.cohere.com/reference/chat#request.body.messages
 */
export function convertMessages(messages: ChatMessage[]): CohereMessage[] {
  return messages.map((message, index) => convertMessage(message, `messages[${index}]`));
}

function convertMessage(message: ChatMessage, where: string): CohereMessage {
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: textOf(message.content) };
    case 'user':
      return { role: 'user', content: typeof message.content === 'string' ? message.content : userContent(message.content, where) };
    case 'assistant':
      return assistantMessage(message, where);
    case 'tool':
      if (typeof message.tool_call_id !== 'string' || !message.tool_call_id) {
        throw badRequest(`${where}.tool_call_id is required: the id of the tool call this message answers.`, `${where}.tool_call_id`, 'invalid_message');
      }
      return { role: 'tool', tool_call_id: message.tool_call_id, content: textOf(message.content) };
    default:
      throw badRequest(
        `${where}.role "${(message as { role: string }).role}" is not supported for cohere; use system, user, assistant or tool (with tool_call_id).`,
        `${where}.role`,
        'invalid_message',
      );
  }
}

/** Text and images (`image_url` with an https or `data:` URL, as Cohere takes them). */
function userContent(parts: ContentPart[] | undefined, where: string): CohereContent[] {
  if (!Array.isArray(parts)) throw badRequest(`${where}.content must be a string or an array of content parts.`, `${where}.content`, 'invalid_content');
  return parts.map((part, index) => {
    if (part?.type === 'text') return { type: 'text', text: part.text };
    if (part?.type === 'image_url' && typeof part.image_url?.url === 'string') {
      const image: CohereContent = { type: 'image_url', image_url: { url: part.image_url.url } };
      if (part.image_url.detail) image.image_url.detail = part.image_url.detail;
      return image;
    }
    throw badRequest(
      `${where}.content[${index}] of type "${String(part?.type)}" is not supported for cohere: send text and image_url parts.`,
      `${where}.content[${index}]`,
      'unsupported_content',
    );
  });
}

/**
 * An assistant turn: its text, and its tool calls with their `arguments` string. A thinking block
 * the gateway returned (`content_blocks`, from Cohere's tool plan) goes back as the `tool_plan`
 * of a turn that calls tools.
 */
function assistantMessage(message: Extract<ChatMessage, { role: 'assistant' }>, where: string): CohereMessage {
  const converted: Extract<CohereMessage, { role: 'assistant' }> = { role: 'assistant' };
  const text = textOf(message.content);
  if (text) converted.content = text;
  if (message.tool_calls?.length) {
    converted.tool_calls = message.tool_calls.map((call, index) => toolCall(call, `${where}.tool_calls[${index}]`));
    const plan = (message.content_blocks ?? [])
      .map((block) => ((block as { type?: string; thinking?: unknown }).type === 'thinking' ? (block as { thinking?: unknown }).thinking : undefined))
      .filter((thinking): thinking is string => typeof thinking === 'string')
      .join('');
    if (plan) converted.tool_plan = plan;
  } else if (!text) {
    converted.content = '';
  }
  return converted;
}

function toolCall(call: ToolCall, where: string): CohereToolCall {
  if (typeof call?.id !== 'string' || typeof call.function?.name !== 'string') {
    throw badRequest(`${where} must have an id and function.name.`, where, 'invalid_tool_call');
  }
  const args = typeof call.function.arguments === 'string' && call.function.arguments.trim() ? call.function.arguments : '{}';
  return { id: call.id, type: 'function', function: { name: call.function.name, arguments: args } };
}
