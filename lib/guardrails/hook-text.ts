import { contentText, lastUserMessageIndex, withContentText } from '../providers/openai-format/message-text';
import type { JsonObject, Operation } from '../providers/types';
import { messagesAnswerText, messagesRequestText, withMessagesAnswerText, withMessagesRequestText } from './messages-text';
import { responsesAnswerText, responsesRequestText, withResponsesAnswerText, withResponsesRequestText } from './responses-text';

/**
 * The text checks read, and where a mutator's text goes back: on the request side the last user
 * message (chat), the prompt (completions), the input (embeddings) or the last user message of the
 * input (responses) or of the messages (messages); on the answer side the first choice's content
 * (chat) or text (completions), the text of the answer's messages (responses, see responses-text.ts)
 * or of the message's text blocks (messages, see messages-text.ts).
 */

export function requestText(operation: Operation, body: JsonObject): string {
  if (operation === 'responses') return responsesRequestText(body);
  if (operation === 'messages') return messagesRequestText(body);
  if (operation === 'chat') {
    const last = lastUserMessageIndex(body.messages);
    return last < 0 ? '' : (contentText((body.messages as JsonObject[])[last]!.content, { textOnly: false }) ?? '');
  }
  return joinedText(operation === 'completions' ? body.prompt : body.input);
}

/**
 * The request with `text` in place of the text `requestText` read. A prompt or input given as a
 * list of strings is checked joined but not rewritten (which item would get which part is not
 * knowable): the request stays as it was, and `undefined` says so.
 */
export function withRequestText(operation: Operation, body: JsonObject, text: string): JsonObject | undefined {
  if (operation === 'responses') return withResponsesRequestText(body, text);
  if (operation === 'messages') return withMessagesRequestText(body, text);
  if (operation === 'chat') {
    const last = lastUserMessageIndex(body.messages);
    if (last < 0) return undefined;
    const messages = (body.messages as JsonObject[]).slice();
    messages[last] = { ...messages[last]!, content: withContentText(messages[last]!.content, text) };
    return { ...body, messages };
  }
  const field = operation === 'completions' ? 'prompt' : 'input';
  return typeof body[field] === 'string' ? { ...body, [field]: text } : undefined;
}

export function answerText(operation: Operation, answer: JsonObject): string {
  if (operation === 'responses') return responsesAnswerText(answer);
  if (operation === 'messages') return messagesAnswerText(answer);
  const first = firstChoice(answer);
  if (!first) return '';
  if (operation === 'completions') return typeof first.text === 'string' ? first.text : '';
  return contentText((first.message as JsonObject | undefined)?.content, { textOnly: false }) ?? '';
}

export function withAnswerText(operation: Operation, answer: JsonObject, text: string): JsonObject | undefined {
  if (operation === 'responses') return withResponsesAnswerText(answer, text);
  if (operation === 'messages') return withMessagesAnswerText(answer, text);
  const first = firstChoice(answer);
  if (!first) return undefined;
  const choices = (answer.choices as JsonObject[]).slice();
  if (operation === 'completions') choices[0] = { ...first, text };
  else {
    const message = (first.message as JsonObject | undefined) ?? {};
    choices[0] = { ...first, message: { ...message, content: withContentText(message.content, text) } };
  }
  return { ...answer, choices };
}

function firstChoice(answer: JsonObject): JsonObject | undefined {
  const choices = answer.choices;
  return Array.isArray(choices) && choices[0] !== null && typeof choices[0] === 'object' ? (choices[0] as JsonObject) : undefined;
}

function joinedText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string').join('\n');
  return '';
}
