import type { PreparedCall, ProviderCall } from './types';

/**
 * The HTTP request of a call and how to read its answer: the provider's adapter, except for a
 * Responses API call to a provider that does not run that API, which goes out as a chat completion.
 */
export function prepareCall(call: ProviderCall): PreparedCall | Promise<PreparedCall> {
  const { provider } = call.target;
  // The translation loads on the first Responses call: the chat functions never make one.
  if (call.operation === 'responses' && !provider.operations.includes('responses'))
    return import('./responses-format/over-chat').then((overChat) => overChat.prepareOverChat(call));
  return provider.adapter.prepare(call);
}
