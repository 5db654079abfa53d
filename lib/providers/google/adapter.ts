import { assertOperationSupported } from '../capabilities';
import type { PreparedCall, ProviderAdapter, ProviderCall, ResolvedTarget } from '../types';
import type { BatchEmbedContentsResponse } from './api';
import { modelSegment, prepareGeminiChat, readJson } from './chat';
import { encodingFormatOf, fromBatchEmbedResponse, prepareEmbeddings, toBatchEmbedRequest } from './embeddings';

/**
 * The Gemini API (Google AI Studio keys) behind the OpenAI format: chat through
 * `models/{model}:generateContent`, embeddings through `:batchEmbedContents`. Gemini has no text
 * completions endpoint, so `/v1/completions` is a 400.
 * @see https://ai.google.dev/api
 */
export const googleAdapter: ProviderAdapter = {
  prepare(call: ProviderCall): PreparedCall {
    assertOperationSupported(call);
    const provider = call.target.provider.name;
    // Gemini names models `models/{id}`; clients send either form.
    const model = String(call.body.model).replace(/^models\//, '');
    const methodUrl = (method: string) => `${call.target.baseUrl}/models/${modelSegment(model)}:${method}`;
    const headers = authHeaders(call.target);
    if (call.operation === 'embeddings') {
      const format = encodingFormatOf(call.body);
      return prepareEmbeddings(call, {
        url: methodUrl('batchEmbedContents'),
        headers,
        body: toBatchEmbedRequest(model, call.body),
        readResponse: (bytes) => fromBatchEmbedResponse(readJson<BatchEmbedContentsResponse>(bytes, provider), { model: call.body.model as string, format }),
      });
    }
    return prepareGeminiChat(call, { provider, methodUrl, headers });
  },
  authenticate: (_request, target) => authHeaders(target),
};

/** The key in Google's `x-goog-api-key` header (rather than `?key=`, which would land in logs). */
function authHeaders(target: ResolvedTarget): Record<string, string> {
  return target.settings.api_key ? { 'x-goog-api-key': target.settings.api_key } : {};
}
