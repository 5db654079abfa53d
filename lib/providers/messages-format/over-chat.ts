/**
 * A Messages call to a provider that does not run Anthropic's API: translated to a chat completion
 * its adapter already speaks, and the answer (whole or streamed) translated back, so that routing,
 * the cache, the hooks and the logs see the Messages format whichever provider answered.
 */
import { chainTransforms } from '../../core/chained-transform';
import { newId } from '../../core/ids';
import type { ChatCompletion } from '../openai-format/types';
import type { JsonObject, PreparedCall, ProviderCall } from '../types';
import { messagesEventStream } from './events-from-chat';
import { messageFromChat } from './from-chat';
import { toChatRequest } from './to-chat';
import type { MessagesRequest } from './types';

/**
 * Providers whose adapters take Anthropic's own `thinking` and `top_k` (Claude on Bedrock and
 * Vertex AI among them) and, with strict API compliance off, answer thinking as `content_blocks`.
 */
const anthropicFieldProviders = new Set(['anthropic', 'bedrock', 'vertex-ai', 'google', 'cohere']);

export async function prepareMessagesOverChat(call: ProviderCall): Promise<PreparedCall> {
  const request = call.body as MessagesRequest;
  const provider = call.target.provider.name;
  const anthropicFields = anthropicFieldProviders.has(provider);
  const chat = toChatRequest(request, { provider, anthropicFields });
  const thinks = chat.thinking !== undefined;
  if (call.stream) Object.assign(chat, { stream: true, stream_options: { include_usage: true } });
  const inner = await call.target.provider.adapter.prepare({
    ...call,
    operation: 'chat',
    body: chat as JsonObject,
    clientBytes: undefined,
    // Thinking goes out, and comes back as content_blocks, only with strict compliance off.
    strictApiCompliance: thinks ? false : call.strictApiCompliance,
  });
  const frame = () => ({ id: newId('msg'), model: request.model });
  return {
    ...inner,
    readResponse(bytes) {
      const answer = inner.readResponse(bytes);
      const completion = JSON.parse(answer.body.toString()) as ChatCompletion;
      return { body: JSON.stringify(messageFromChat(completion, frame())), usage: answer.usage };
    },
    streamTransform: (onUsage) => chainTransforms(inner.streamTransform(onUsage), messagesEventStream(frame())),
  };
}
