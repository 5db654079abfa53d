import { prepareMessagesOverChat } from './messages-format/over-chat';
import { prepareOverChat } from './responses-format/over-chat';
import type { PreparedCall, ProviderCall } from './types';

/**
 * The HTTP request of a call and how to read its answer: the provider's adapter, except for a
 * Responses API or Messages call to a provider that does not run that API, which goes out as a chat
 * completion.
 */
export function prepareCall(call: ProviderCall): PreparedCall | Promise<PreparedCall> {
  const { provider } = call.target;
  if (call.operation === 'responses' && !provider.operations.includes('responses')) return prepareOverChat(call);
  if (call.operation === 'messages' && !provider.operations.includes('messages')) return prepareMessagesOverChat(call);
  return provider.adapter.prepare(call);
}
