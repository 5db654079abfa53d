import type { PreparedCall, ProviderCall } from './types';

/**
 * The HTTP request of a call and how to read its answer: the provider's adapter, except for a
 * Responses API or Messages call to a provider that does not run that API, which goes out as a chat
 * completion.
 */
export function prepareCall(call: ProviderCall): PreparedCall | Promise<PreparedCall> {
  const { provider } = call.target;
  // The translations load on their first call: the chat functions never make one.
  if (call.operation === 'responses' && !provider.operations.includes('responses'))
    return import('./responses-format/over-chat').then((overChat) => overChat.prepareOverChat(call));
  if (call.operation === 'messages' && !provider.operations.includes('messages'))
    return import('./messages-format/over-chat').then((overChat) => overChat.prepareMessagesOverChat(call));
  return provider.adapter.prepare(call);
}
