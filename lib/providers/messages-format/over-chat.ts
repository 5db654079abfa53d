/**
 * A Messages call to a provider that does not run Anthropic's API: translated to a chat completion
 * its adapter already speaks, and the answer (whole or streamed) translated back, so that routing,
 * the cache, the hooks and the logs see the Messages format whichever provider answered.
 */
import { newId } from '../../core/ids';
import { prepareOverChatCall, thinkingProviders } from '../over-chat-call';
import type { JsonObject, PreparedCall, ProviderCall } from '../types';
import { messagesEventStream } from './events-from-chat';
import { messageFromChat } from './from-chat';
import { toChatRequest } from './to-chat';
import type { MessagesRequest } from './types';

export async function prepareMessagesOverChat(call: ProviderCall): Promise<PreparedCall> {
  const request = call.body as MessagesRequest;
  const provider = call.target.provider.name;
  const chat = toChatRequest(request, { provider, anthropicFields: thinkingProviders.has(provider) });
  const frame = () => ({ id: newId('msg'), model: request.model });
  return prepareOverChatCall(call, {
    chat: chat as JsonObject,
    thinks: chat.thinking !== undefined,
    answerFromChat: (completion) => messageFromChat(completion, frame()),
    eventsFromChat: () => messagesEventStream(frame()),
  });
}
