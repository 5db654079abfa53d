import { isPlainObject } from '../core/plain-object';
import type { JsonObject } from '../providers/types';

/**
 * The text checks read in a Messages exchange, and where a mutator's text goes back. On the request
 * side it is the last user message's text (a string content, or its text blocks joined by
 * newlines); on the answer side the message's text blocks, joined. Tool results, images and
 * thinking are not text a check reads.
 */

export function messagesRequestText(body: JsonObject): string {
  const last = lastUserMessage(body.messages);
  return last === undefined ? '' : (contentText(last.content, '\n') ?? '');
}

/**
 * The request with `text` in place of the text `messagesRequestText` read, or undefined when the
 * last user message has no text to replace (the request then stays as it was).
 */
export function withMessagesRequestText(body: JsonObject, text: string): JsonObject | undefined {
  const messages = Array.isArray(body.messages) ? body.messages.slice() : [];
  const index = lastUserIndex(messages);
  if (index < 0) return undefined;
  const message = messages[index] as JsonObject;
  const content = withText(message.content, text);
  if (content === undefined) return undefined;
  messages[index] = { ...message, content };
  return { ...body, messages };
}

export function messagesAnswerText(answer: JsonObject): string {
  return contentText(answer.content, '') ?? '';
}

/**
 * The answer with `text` as its text: the first text block takes it and the other text blocks go,
 * so nothing a check rewrote (a redaction) is left in another block. Undefined without a text block.
 */
export function withMessagesAnswerText(answer: JsonObject, text: string): JsonObject | undefined {
  const content = withText(answer.content, text);
  return content === undefined ? undefined : { ...answer, content };
}

function lastUserIndex(messages: unknown[]): number {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (isPlainObject(message) && message.role === 'user' && contentText(message.content, '') !== undefined) return index;
  }
  return -1;
}

function lastUserMessage(messages: unknown): JsonObject | undefined {
  if (!Array.isArray(messages)) return undefined;
  const index = lastUserIndex(messages);
  return index < 0 ? undefined : (messages[index] as JsonObject);
}

const isTextBlock = (block: unknown): block is { type: 'text'; text: string } =>
  isPlainObject(block) && block.type === 'text' && typeof block.text === 'string';

/** A string content, or its text blocks joined; undefined when it has no text block. */
function contentText(content: unknown, separator: string): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.filter(isTextBlock).map((block) => block.text);
  return texts.length === 0 ? undefined : texts.join(separator);
}

function withText(content: unknown, text: string): unknown[] | string | undefined {
  if (typeof content === 'string') return text;
  if (!Array.isArray(content) || !content.some(isTextBlock)) return undefined;
  let placed = false;
  const blocks: unknown[] = [];
  for (const block of content) {
    if (!isTextBlock(block)) blocks.push(block);
    else if (!placed) {
      blocks.push({ ...block, text });
      placed = true;
    }
  }
  return blocks;
}
