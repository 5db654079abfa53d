import { assertOperationSupported } from '../capabilities';
import { badRequest } from '../../core/errors';
import { modelSegment, prepareGeminiChat } from '../google/chat';
import type { PreparedCall, ProviderAdapter, ProviderCall } from '../types';
import { prepareVertexClaude } from './anthropic';
import { vertexAuthHeaders } from './auth';
import { prepareVertexEmbeddings } from './embeddings';
import { publisherOf } from './url';

/**
 * Google Vertex AI behind the OpenAI format. Gemini models speak the same generateContent format as
 * the Gemini API (`…/publishers/google/models/{model}:generateContent`); Claude models the Anthropic
 * Messages format through rawPredict. Embeddings go to `:predict`. There are no text completions.
 * The request is mapped (and refused if it is wrong) before any access token is minted.
 * @see https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference
 */
export const vertexAdapter: ProviderAdapter = {
  async prepare(call: ProviderCall): Promise<PreparedCall> {
    assertOperationSupported(call);
    const provider = call.target.provider.name;
    const { publisher, model } = publisherOf(String(call.body.model));
    const modelUrl = `${call.target.baseUrl}/publishers/${publisher}/models/${modelSegment(model)}`;
    let prepared: PreparedCall;
    if (publisher === 'anthropic') {
      if (call.operation !== 'chat')
        throw badRequest(`Claude models on ${provider} have no embeddings; use a Google embedding model.`, 'model', 'unsupported_operation');
      prepared = prepareVertexClaude(call, modelUrl);
    } else if (call.operation === 'embeddings') {
      prepared = prepareVertexEmbeddings(call, modelUrl);
    } else {
      prepared = prepareGeminiChat(call, { provider, methodUrl: (method) => `${modelUrl}:${method}`, headers: {} });
    }
    Object.assign(prepared.headers, await vertexAuthHeaders(call.target, call.requestHeaders));
    return prepared;
  },
  authenticate: (request, target) => vertexAuthHeaders(target, request.headers),
};
