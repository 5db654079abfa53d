import { readJson } from '../google/chat';
import { embeddingInputs, encodingFormatOf, prepareEmbeddings, toEmbeddingList } from '../google/embeddings';
import type { PreparedCall, ProviderCall } from '../types';

interface PredictResponse {
  predictions?: Array<{ embeddings?: { values?: number[]; statistics?: { token_count?: number } } }>;
}

/**
 * Embeddings on Vertex AI: `…/publishers/google/models/{model}:predict` with one instance per input
 * and `dimensions` as `outputDimensionality`. Vertex counts each input's tokens, which become the
 * usage.
 * @see https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings-api
 */
export function prepareVertexEmbeddings(call: ProviderCall, modelUrl: string): PreparedCall {
  const provider = call.target.provider.name;
  const format = encodingFormatOf(call.body);
  const dimensions = typeof call.body.dimensions === 'number' ? call.body.dimensions : undefined;
  return prepareEmbeddings(call, {
    url: `${modelUrl}:predict`,
    headers: {},
    body: {
      instances: embeddingInputs(call.body).map((content) => ({ content })),
      ...(dimensions !== undefined ? { parameters: { outputDimensionality: dimensions } } : {}),
    },
    readResponse(bytes) {
      const predictions = readJson<PredictResponse>(bytes, provider).predictions ?? [];
      const tokens = predictions.reduce((sum, prediction) => sum + (prediction.embeddings?.statistics?.token_count ?? 0), 0);
      const vectors = predictions.map((prediction) => prediction.embeddings?.values ?? []);
      const list = toEmbeddingList(vectors, { model: call.body.model as string, format, promptTokens: tokens });
      return { body: JSON.stringify(list), usage: { prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens } };
    },
  });
}
