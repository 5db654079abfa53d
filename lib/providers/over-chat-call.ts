/**
 * A call of another API (Responses, Messages) made as a chat completion at the target's own adapter:
 * the chat body goes out, streamed with usage when the call streams, and the answer comes back
 * translated, whole or as the other API's events. The translations supply the two directions.
 */
import type { Transform } from 'node:stream';
import { chainTransforms } from '../core/chained-transform';
import type { ChatCompletion } from './openai-format/types';
import type { JsonObject, PreparedCall, ProviderCall } from './types';

/**
 * Providers whose chat adapters take a thinking budget (and Anthropic's `thinking` and `top_k`) and,
 * with strict API compliance off, answer thinking as `content_blocks`.
 */
export const thinkingProviders: ReadonlySet<string> = new Set(['anthropic', 'bedrock', 'vertex-ai', 'google', 'cohere']);

export interface OverChat {
  chat: JsonObject;
  /** Whether the chat body asks for thinking, which comes back only with strict compliance off. */
  thinks: boolean;
  answerFromChat(completion: ChatCompletion): unknown;
  eventsFromChat(): Transform;
}

export async function prepareOverChatCall(call: ProviderCall, over: OverChat): Promise<PreparedCall> {
  if (call.stream) Object.assign(over.chat, { stream: true, stream_options: { include_usage: true } });
  const inner = await call.target.provider.adapter.prepare({
    ...call,
    operation: 'chat',
    body: over.chat,
    clientBytes: undefined,
    strictApiCompliance: over.thinks ? false : call.strictApiCompliance,
    responsesChain: undefined,
  });
  return {
    ...inner,
    readResponse(bytes) {
      const answer = inner.readResponse(bytes);
      const completion = JSON.parse(answer.body.toString()) as ChatCompletion;
      return { body: JSON.stringify(over.answerFromChat(completion)), usage: answer.usage };
    },
    streamTransform: (onUsage) => chainTransforms(inner.streamTransform(onUsage), over.eventsFromChat()),
  };
}
