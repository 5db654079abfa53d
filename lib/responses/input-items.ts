/**
 * A request's `input` as the items OpenAI stores and lists (`GET /v1/responses/{id}/input_items`):
 * every item typed, with an id and a status, message content as parts.
 * @see https://platform.openai.com/docs/api-reference/responses/input-items
 */
import { newId } from '../core/ids';
import { isPlainObject } from '../core/plain-object';
import type { ConversationItem, MessageItem, ResponsesRequest } from '../providers/responses-format/types';

/** The id prefix OpenAI gives each item type. */
const idPrefixes: Record<string, string> = { message: 'msg', function_call: 'fc', function_call_output: 'fco', reasoning: 'rs' };

export function inputItems(request: ResponsesRequest): ConversationItem[] {
  const input = request.input;
  if (typeof input === 'string')
    return [{ type: 'message', id: newId('msg'), role: 'user', content: [{ type: 'input_text', text: input }], status: 'completed' }];
  if (!Array.isArray(input)) return [];
  return input.map((item) => storedItem(item));
}

function storedItem(item: unknown): ConversationItem {
  // Items are checked by the translation (to-chat.ts); anything it refused never gets here.
  if (!isPlainObject(item)) return item as ConversationItem;
  const type = typeof item.type === 'string' ? item.type : item.role !== undefined ? 'message' : undefined;
  if (type === undefined) return item as unknown as ConversationItem;
  const stored: Record<string, unknown> = { ...item, type };
  const prefix = idPrefixes[type];
  if (typeof stored.id !== 'string' && prefix !== undefined) stored.id = newId(prefix);
  if (type === 'message') stored.content = messageContent(stored as unknown as MessageItem);
  // Reasoning items carry no status unless the model gave one; the others are whole once sent.
  if (type !== 'reasoning' && prefix !== undefined && (stored.status === undefined || stored.status === null)) stored.status = 'completed';
  return stored as unknown as ConversationItem;
}

/** String content as one part: input text for the client's roles, output text for the assistant's. */
function messageContent(message: MessageItem): MessageItem['content'] {
  if (typeof message.content !== 'string') return message.content;
  if (message.role === 'assistant') return [{ type: 'output_text', text: message.content, annotations: [] }];
  return [{ type: 'input_text', text: message.content }];
}
