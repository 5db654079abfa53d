import { isPlainObject } from '../core/plain-object';
import type { JsonObject } from '../providers/types';

/**
 * The text checks read in a Responses exchange, and where a mutator's text goes back. On the
 * request side it is the last user message of `input` (the string itself when `input` is one),
 * read as the chat path reads the last user message: a string content, or its `input_text` parts
 * joined by newlines. On the answer side it is what `output_text` holds: the `output_text` parts of
 * the answer's message items, joined.
 */

export function responsesRequestText(body: JsonObject): string {
  const input = body.input;
  if (typeof input === 'string') return input;
  const last = lastUserMessageIndex(input);
  return last < 0 ? '' : inputText((input as JsonObject[])[last]!.content);
}

/**
 * The request with `text` in place of the text `responsesRequestText` read, or undefined when
 * there is no user message to put it in (the request then stays as it was).
 */
export function withResponsesRequestText(body: JsonObject, text: string): JsonObject | undefined {
  const input = body.input;
  if (typeof input === 'string') return { ...body, input: text };
  const last = lastUserMessageIndex(input);
  if (last < 0) return undefined;
  const items = (input as JsonObject[]).slice();
  items[last] = { ...items[last]!, content: withInputText(items[last]!.content, text) };
  return { ...body, input: items };
}

export function responsesAnswerText(answer: JsonObject): string {
  let text = '';
  for (const item of messageItems(answer)) for (const part of item.content as unknown[]) if (isOutputText(part)) text += part.text;
  return text;
}

/**
 * The answer with `text` as its text: the first message's first `output_text` part takes it and
 * every other `output_text` part goes (a message left with nothing goes too), so that the text
 * checked as one is the one text that passes on, and nothing the check rewrote (a redaction) is
 * left in another part. `output_text` follows. Undefined when the answer has no message to hold it.
 */
export function withResponsesAnswerText(answer: JsonObject, text: string): JsonObject | undefined {
  const messages = messageItems(answer);
  const holder = messages.find((item) => (item.content as unknown[]).some(isOutputText)) ?? messages[0];
  if (!holder) return undefined;
  const output: unknown[] = [];
  for (const item of answer.output as unknown[]) {
    if (!isMessage(item)) {
      output.push(item);
      continue;
    }
    let placed = item !== holder;
    const parts: unknown[] = [];
    for (const part of item.content as unknown[]) {
      if (!isOutputText(part)) parts.push(part);
      else if (!placed) {
        parts.push(rewrittenPart(part, text));
        placed = true;
      }
    }
    if (!placed) parts.unshift({ type: 'output_text', text, annotations: [] });
    else if (parts.length === 0) continue;
    output.push({ ...item, content: parts });
  }
  return { ...answer, output, output_text: text };
}

/** The part with its new text; its token log probabilities spelled the old text, so they go. */
function rewrittenPart(part: JsonObject, text: string): JsonObject {
  const rewritten: JsonObject = { ...part, text };
  if (Array.isArray(part.logprobs)) rewritten.logprobs = [];
  return rewritten;
}

/** The index of the last user message among the input items (a message may leave out its `type`), or -1. */
function lastUserMessageIndex(input: unknown): number {
  if (!Array.isArray(input)) return -1;
  let index = input.length - 1;
  while (index >= 0 && !isUserMessage(input[index])) index--;
  return index;
}

function isUserMessage(item: unknown): boolean {
  return isPlainObject(item) && item.role === 'user' && (item.type === undefined || item.type === 'message');
}

function inputText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content) if (isPlainObject(part) && part.type === 'input_text' && typeof part.text === 'string') texts.push(part.text);
  return texts.join('\n');
}

/**
 * Content with its text replaced by `text`: a string becomes `text`; in a list of parts the first
 * `input_text` part takes it and the other text parts go, so what was checked as one text is sent
 * as one. Other parts (images, files) stay where they were; a list without text gets it first.
 */
function withInputText(content: unknown, text: string): unknown {
  if (!Array.isArray(content)) return text;
  let placed = false;
  const parts: unknown[] = [];
  for (const part of content) {
    if (!isPlainObject(part) || part.type !== 'input_text') parts.push(part);
    else if (!placed) {
      parts.push({ ...part, text });
      placed = true;
    }
  }
  if (!placed) parts.unshift({ type: 'input_text', text });
  return parts;
}

/** The answer's message items whose content is a list of parts, in output order. */
function messageItems(answer: JsonObject): JsonObject[] {
  return Array.isArray(answer.output) ? answer.output.filter(isMessage) : [];
}

function isMessage(item: unknown): item is JsonObject {
  return isPlainObject(item) && item.type === 'message' && Array.isArray(item.content);
}

function isOutputText(part: unknown): part is JsonObject & { text: string } {
  return isPlainObject(part) && part.type === 'output_text' && typeof part.text === 'string';
}
