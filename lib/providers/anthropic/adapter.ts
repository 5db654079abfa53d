import { assertOperationSupported } from '../capabilities';
import type { ChatRequest } from '../openai-format/types';
import type { PreparedCall, ProviderAdapter, ProviderCall, ResolvedTarget } from '../types';
import { readAnthropicError } from './errors';
import { toMessagesRequest } from './request';
import { readMessageResponse } from './response';
import { nativeMessagesCall } from './messages';
import { anthropicStreamTransform } from './stream';

/** The API version sent when the client does not choose one with its own `anthropic-version` header. */
export const defaultAnthropicVersion = '2023-06-01';

/**
 * Anthropic's Messages API behind the OpenAI chat format, and as itself for the gateway's own
 * `/v1/messages`. Text completions and embeddings have no Anthropic counterpart and are a 400.
 * @see https://docs.anthropic.com/en/api/messages
 */
export const anthropicAdapter: ProviderAdapter = {
  prepare(call: ProviderCall): PreparedCall {
    assertOperationSupported(call);
    if (call.operation === 'messages')
      return nativeMessagesCall(call, new URL(`${call.target.baseUrl}/messages`), anthropicHeaders(call.requestHeaders, call.target));
    const provider = call.target.provider.name;
    const request = call.body as ChatRequest;
    const { body, mapping } = toMessagesRequest(request, { provider, strictApiCompliance: call.strictApiCompliance, stream: call.stream });
    return {
      url: new URL(`${call.target.baseUrl}/messages`),
      headers: {
        ...call.forwardHeaders,
        'content-type': 'application/json',
        accept: call.stream ? 'text/event-stream' : 'application/json',
        ...anthropicHeaders(call.requestHeaders, call.target),
      },
      body: JSON.stringify({ model: request.model, ...body }),
      readError: (status, bytes) => readAnthropicError(provider, status, bytes),
      readResponse: (bytes) => readMessageResponse(bytes, mapping),
      streamTransform: (onUsage) =>
        anthropicStreamTransform({ ...mapping, model: request.model, includeUsage: request.stream_options?.include_usage === true, onUsage }),
    };
  },
  authenticate: (request, target) => anthropicHeaders(request.headers, target),
};

/**
 * `x-api-key` (the key the client sent as `Authorization: Bearer`, or the config's `api_key`),
 * `anthropic-version` (the client's header wins over the default) and the client's `anthropic-beta`.
 * @see https://docs.anthropic.com/en/api/versioning
 */
function anthropicHeaders(requestHeaders: Record<string, string>, target: ResolvedTarget): Record<string, string> {
  const headers: Record<string, string> = { 'anthropic-version': requestHeaders['anthropic-version'] || defaultAnthropicVersion };
  if (target.settings.api_key) headers['x-api-key'] = target.settings.api_key;
  if (requestHeaders['anthropic-beta']) headers['anthropic-beta'] = requestHeaders['anthropic-beta'];
  return headers;
}
