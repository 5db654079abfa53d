import { badRequest } from '../../core/errors';
import type { TokenUsage } from '../../core/usage';
import type { JsonObject, PreparedCall, ProviderCall } from '../types';
import type { BatchEmbedContentsRequest, BatchEmbedContentsResponse } from './api';
import { googleError } from './errors';

/** An embeddings call to a Google endpoint (Gemini's batchEmbedContents, Vertex AI's predict). */
export function prepareEmbeddings(
  call: ProviderCall,
  fields: { url: string; body: unknown; headers: Record<string, string>; readResponse: PreparedCall['readResponse'] },
): PreparedCall {
  const provider = call.target.provider.name;
  return {
    url: new URL(fields.url),
    headers: { ...call.forwardHeaders, 'content-type': 'application/json', accept: 'application/json', ...fields.headers },
    body: JSON.stringify(fields.body),
    readError: (status, bytes) => googleError(provider, status, bytes),
    readResponse: fields.readResponse,
    streamTransform: () => {
      // The unified route refuses stream: true for embeddings before any adapter runs.
      throw badRequest('Embeddings cannot be streamed.', 'stream', 'invalid_type');
    },
  };
}

/** The texts of an OpenAI embeddings request (token-id arrays have no Google equivalent). */
export function embeddingInputs(body: JsonObject): string[] {
  const input = body.input;
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length > 0 && input.every((item) => typeof item === 'string')) return input as string[];
  throw badRequest('input must be a string or a non-empty array of strings for Google embeddings (token arrays are not supported).', 'input', 'invalid_input');
}

/** `float` (the default) or `base64`, which the gateway encodes itself: Google answers floats only. */
export function encodingFormatOf(body: JsonObject): 'float' | 'base64' {
  const format = body.encoding_format ?? 'float';
  if (format !== 'float' && format !== 'base64') throw badRequest('encoding_format must be "float" or "base64".', 'encoding_format', 'invalid_encoding_format');
  return format;
}

/** OpenAI's base64 embedding: the vector as little-endian float32 bytes. */
export function float32Base64(values: number[]): string {
  const bytes = Buffer.allocUnsafe(values.length * 4);
  values.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
  return bytes.toString('base64');
}

/** Vectors as an OpenAI embedding list. `promptTokens` is 0 when the provider does not count them. */
export function toEmbeddingList(vectors: number[][], options: { model: string; format: 'float' | 'base64'; promptTokens?: number }) {
  const tokens = options.promptTokens ?? 0;
  return {
    object: 'list' as const,
    data: vectors.map((values, index) => ({ object: 'embedding' as const, index, embedding: options.format === 'base64' ? float32Base64(values) : values })),
    model: options.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

/**
 * An OpenAI embeddings request as a Gemini `batchEmbedContents` request: one request per input,
 * `dimensions` as `outputDimensionality`.
 * @see https://ai.google.dev/api/embeddings#method:-models.batchembedcontents
 */
export function toBatchEmbedRequest(modelName: string, body: JsonObject): BatchEmbedContentsRequest {
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : undefined;
  return {
    requests: embeddingInputs(body).map((text) => ({
      model: `models/${modelName}`,
      content: { parts: [{ text }] },
      ...(dimensions !== undefined ? { outputDimensionality: dimensions } : {}),
    })),
  };
}

/** Gemini reports no token counts for embeddings: the answer's usage is zero and none is logged. */
export function fromBatchEmbedResponse(
  response: BatchEmbedContentsResponse,
  options: { model: string; format: 'float' | 'base64' },
): { body: string; usage?: TokenUsage } {
  const vectors = (response.embeddings ?? []).map((embedding) => embedding.values ?? []);
  return { body: JSON.stringify(toEmbeddingList(vectors, options)) };
}
