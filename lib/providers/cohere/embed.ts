import { badRequest } from '../../core/errors';
import type { TokenUsage } from '../../core/usage';
import type { JsonObject } from '../types';
import type { CohereEmbedBody, CohereEmbedResponse } from './api';
import { parseCohereJson } from './response';

/** Cohere's v3+ embedding models need to know what a text is for; stored documents by default. */
export const defaultInputType = 'search_document';

export interface EmbedMapping {
  model: string;
  base64: boolean;
}

/**
 * An OpenAI embeddings request as a Cohere v2 embed body: `input` (a string or strings) → `texts`;
 * `input_type` (a Cohere parameter a client may send: `search_document`, `search_query`,
 * `classification`, `clustering`) defaults to {@link defaultInputType}; `dimensions` →
 * `output_dimension`; float vectors are always asked for, and base64 is made from them. Token-id
 * inputs are a 400: Cohere embeds text. `user` is left out.
 * @see https://docs.cohere.com/reference/embed
 */
export function toEmbedBody(request: JsonObject): { body: CohereEmbedBody; mapping: EmbedMapping } {
  const input = request.input;
  const texts = typeof input === 'string' ? [input] : input;
  if (!Array.isArray(texts) || texts.length === 0 || !texts.every((text) => typeof text === 'string')) {
    throw badRequest('input must be a string or a non-empty array of strings for cohere (token ids are not supported).', 'input', 'invalid_input');
  }
  const format = request.encoding_format ?? 'float';
  if (format !== 'float' && format !== 'base64') throw badRequest('encoding_format must be "float" or "base64".', 'encoding_format', 'invalid_encoding_format');
  const body: CohereEmbedBody = {
    model: request.model as string,
    texts: texts as string[],
    input_type: typeof request.input_type === 'string' ? request.input_type : defaultInputType,
    embedding_types: ['float'],
  };
  if (typeof request.dimensions === 'number') body.output_dimension = request.dimensions;
  if (typeof request.truncate === 'string') body.truncate = request.truncate;
  return { body, mapping: { model: request.model as string, base64: format === 'base64' } };
}

/** A vector as OpenAI's base64 form: the float32 values, little-endian, in base64. */
export function float32Base64(vector: number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i], i * 4);
  return bytes.toString('base64');
}

/** A Cohere embed response as OpenAI's embedding list; usage is Cohere's billed input tokens (the only count it reports). */
export function readEmbedResponse(bytes: Buffer, mapping: EmbedMapping): { body: string; usage: TokenUsage } {
  const response = parseCohereJson<CohereEmbedResponse>(bytes);
  const vectors = response.embeddings?.float ?? [];
  const tokens = response.meta?.billed_units?.input_tokens ?? 0;
  const usage: TokenUsage = { prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens };
  const data = vectors.map((vector, index) => ({ object: 'embedding', index, embedding: mapping.base64 ? float32Base64(vector) : vector }));
  return { body: JSON.stringify({ object: 'list', data, model: mapping.model, usage: { prompt_tokens: tokens, total_tokens: tokens } }), usage };
}
