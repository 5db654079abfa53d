import type { JsonObject } from '../types';

/** The index of the last message with role `user`, or -1. */
export function lastUserMessageIndex(messages: unknown): number {
  if (!Array.isArray(messages)) return -1;
  let index = messages.length - 1;
  while (index >= 0 && (messages[index] as JsonObject | null)?.role !== 'user') index--;
  return index;
}

/**
 * The text of a message's content: a string, or its text parts joined by newlines. With
 * `textOnly`, content that holds anything but text (an image, audio) has no text at all.
 */
export function contentText(content: unknown, options: { textOnly: boolean }): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  for (const part of content as Array<JsonObject | null>) {
    if (part?.type === 'text' && typeof part.text === 'string') texts.push(part.text);
    else if (options.textOnly) return undefined;
  }
  return texts.length > 0 ? texts.join('\n') : undefined;
}

/**
 * Content with its text replaced by `text`: a string becomes `text`; in a list of parts the first
 * text part takes it and the other text parts go, so what was checked as one text is sent as one.
 * Parts that are not text stay where they were.
 */
export function withContentText(content: unknown, text: string): unknown {
  if (!Array.isArray(content)) return text;
  let placed = false;
  const parts: unknown[] = [];
  for (const part of content as Array<JsonObject | null>) {
    if (part?.type !== 'text') parts.push(part);
    else if (!placed) {
      parts.push({ ...part, text });
      placed = true;
    }
  }
  return parts;
}
