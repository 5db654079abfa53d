import { assertOperationSupported } from '../capabilities';
import { badRequest } from '../../core/errors';
import type { ChatRequest } from '../openai-format/types';
import { providerError } from '../provider-error';
import type { PreparedCall, ProviderAdapter, ProviderCall, ResolvedTarget } from '../types';
import { readEmbedResponse, toEmbedBody } from './embed';
import { toChatBody } from './request';
import { readChatResponse } from './response';
import { cohereStreamTransform } from './stream';

const name = 'cohere';

/**
 * Cohere's v2 chat (`/chat`) and embed (`/embed`) APIs behind the OpenAI format. Cohere has no
 * text-completions API: `/v1/completions` is a 400. Errors (`{"message": …}` with an HTTP status)
 * keep Cohere's status and message.
 * @see https://docs.cohere.com/reference/about
 */
export const cohereAdapter: ProviderAdapter = {
  prepare(call: ProviderCall): PreparedCall {
    assertOperationSupported(call);
    const common = {
      headers: {
        ...call.forwardHeaders,
        'content-type': 'application/json',
        accept: call.stream ? 'text/event-stream' : 'application/json',
        ...authHeaders(call.target),
      },
      readError: (status: number, bytes: Buffer) => providerError(name, status, bytes),
    };
    if (call.operation === 'embeddings') {
      const { body, mapping } = toEmbedBody(call.body);
      return {
        ...common,
        url: new URL(`${call.target.baseUrl}/embed`),
        body: JSON.stringify(body),
        readResponse: (bytes) => readEmbedResponse(bytes, mapping),
        streamTransform: () => {
          throw badRequest('Embeddings cannot be streamed.', 'stream');
        },
      };
    }
    const request = call.body as ChatRequest;
    const mapping = { model: request.model, strictApiCompliance: call.strictApiCompliance };
    return {
      ...common,
      url: new URL(`${call.target.baseUrl}/chat`),
      body: JSON.stringify(toChatBody(request, { strictApiCompliance: call.strictApiCompliance, stream: call.stream })),
      readResponse: (bytes) => readChatResponse(bytes, mapping),
      streamTransform: (onUsage) => cohereStreamTransform({ ...mapping, includeUsage: request.stream_options?.include_usage === true, onUsage }),
    };
  },
  authenticate: (_request, target) => authHeaders(target),
};

/** @see https://docs.cohere.com/reference/about#authentication */
function authHeaders(target: ResolvedTarget): Record<string, string> {
  return target.settings.api_key ? { authorization: `Bearer ${target.settings.api_key}` } : {};
}
