import { badRequest } from '../../core/errors';
import type { ChatMessage, ChatRequest, ContentPart, TextPart } from './types';

/** The text of a message's content (string, or the text parts joined). */
export function textOf(content: string | ContentPart[] | TextPart[] | null | undefined): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  let text = '';
  for (const part of content as ContentPart[]) if (part.type === 'text') text += part.text;
  return text;
}

/** `stop` as a list (OpenAI accepts a string or up to four strings). */
export function stopSequences(stop: ChatRequest['stop']): string[] | undefined {
  if (stop == null) return undefined;
  return typeof stop === 'string' ? [stop] : stop;
}

/** `max_completion_tokens`, else the deprecated `max_tokens`. */
export function maxOutputTokens(request: ChatRequest): number | undefined {
  return request.max_completion_tokens ?? request.max_tokens ?? undefined;
}

/** A `data:` URL split into its media type and base64 payload; undefined for other URLs. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1], data: match[2] } : undefined;
}

/** A tool call's `arguments` string as an object (providers that want JSON, not a string). */
export function parseToolArguments(argumentsJson: string, where: string): Record<string, unknown> {
  if (!argumentsJson.trim()) return {};
  try {
    const parsed = JSON.parse(argumentsJson);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
  } catch {
    // reported below
  }
  throw badRequest(`${where} must be a JSON object string; got ${JSON.stringify(argumentsJson.slice(0, 100))}.`, where, 'invalid_tool_arguments');
}

/** System and developer messages, in order, as text; and the rest of the conversation. */
export function splitSystem(messages: ChatMessage[]): { system: string[]; conversation: ChatMessage[] } {
  const system: string[] = [];
  const conversation: ChatMessage[] = [];
  for (const message of messages) {
    if (message.role === 'system' || message.role === 'developer') system.push(textOf(message.content));
    else conversation.push(message);
  }
  return { system, conversation };
}

/** The name of the function a tool call id belongs to, from earlier assistant messages. */
export function toolNamesById(messages: ChatMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) names.set(call.id, call.function.name);
  }
  return names;
}
