import { badRequest, GatewayError } from '../../core/errors';
import type { JsonObject } from '../types';
import type { CohereEmbeddingRequest, CohereEmbeddingResponse, TitanEmbeddingRequest, TitanEmbeddingResponse } from './api';
import { providerName } from './errors';

/**
 * Embeddings through InvokeModel (Converse has none), for the two families whose bodies are
 * documented: Amazon Titan Text Embeddings (`amazon.titan-embed-text-*`, one text per call) and
 * Cohere Embed (`cohere.embed-*`, up to 96 texts). Other models are a 400 naming these.
 * - Titan: `{inputText, dimensions?}`; an input list of more than one text is a 400 (one call each).
 * - Cohere: `{texts, input_type}` with `input_type` "search_document" unless the request says
 *   otherwise (`input_type` is passed through, as is `truncate`); `dimensions` only for Embed v4
 *   (`output_dimension`).
 * `encoding_format: "base64"` is honoured by packing the floats as little-endian float32, as OpenAI does.
 * @see https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html
 * @see https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed.html
 */
export type EmbeddingFamily = 'titan' | 'cohere';

export function buildEmbeddingRequest(body: JsonObject): { family: EmbeddingFamily; request: TitanEmbeddingRequest | CohereEmbeddingRequest } {
  const model = String(body.model);
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(inputs) || inputs.length === 0 || !inputs.every((item) => typeof item === 'string')) {
    throw badRequest('input must be a string or a non-empty array of strings for Bedrock (token arrays are not supported).', 'input', 'invalid_type');
  }
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : undefined;
  if (/(^|[.:/])amazon\.titan-embed-(text|g1-text)/.test(model)) {
    if (inputs.length > 1) {
      throw badRequest(
        `Titan embedding models take one text per request; got ${inputs.length}. Send one input per request, or use a Cohere Embed model for lists.`,
        'input',
        'unsupported_parameter',
      );
    }
    const request: TitanEmbeddingRequest = { inputText: inputs[0] };
    if (dimensions !== undefined) request.dimensions = dimensions;
    return { family: 'titan', request };
  }
  if (/(^|[.:/])cohere\.embed-/.test(model)) {
    const request: CohereEmbeddingRequest = { texts: inputs, input_type: typeof body.input_type === 'string' ? body.input_type : 'search_document' };
    if (typeof body.truncate === 'string') request.truncate = body.truncate;
    if (dimensions !== undefined) {
      if (!model.includes('embed-v4')) throw badRequest('dimensions is supported only by Cohere Embed v4 on Bedrock.', 'dimensions', 'unsupported_parameter');
      request.output_dimension = dimensions;
    }
    return { family: 'cohere', request };
  }
  throw badRequest(
    `Bedrock embeddings are supported for Amazon Titan Text Embeddings (amazon.titan-embed-text-*) and Cohere Embed (cohere.embed-*) models; "${model}" is neither.`,
    'model',
    'unsupported_model',
  );
}

export function readEmbeddingResponse(bytes: Buffer, context: { family: EmbeddingFamily; model: string; base64: boolean; inputCount: number }) {
  let parsed: (TitanEmbeddingResponse & CohereEmbeddingResponse) | undefined;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    // reported below
  }
  let vectors: number[][] | undefined;
  let promptTokens = 0;
  if (context.family === 'titan' && Array.isArray(parsed?.embedding)) {
    vectors = [parsed.embedding];
    promptTokens = Number(parsed.inputTextTokenCount ?? 0);
  } else if (context.family === 'cohere' && parsed?.embeddings) {
    vectors = Array.isArray(parsed.embeddings) ? parsed.embeddings : parsed.embeddings.float;
    promptTokens = Number(parsed.meta?.billed_units?.input_tokens ?? 0);
  }
  if (!vectors || vectors.length !== context.inputCount) {
    throw new GatewayError(502, 'Bedrock answered with a body that is not an embedding response.', {
      code: 'provider_response_unreadable',
      provider: providerName,
    });
  }
  const usage = { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: promptTokens };
  const data = vectors.map((vector, index) => ({ object: 'embedding', index, embedding: context.base64 ? packFloat32(vector) : vector }));
  return { body: JSON.stringify({ object: 'list', data, model: context.model, usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } }), usage };
}

function packFloat32(vector: number[]): string {
  const buffer = Buffer.allocUnsafe(vector.length * 4);
  vector.forEach((value, index) => buffer.writeFloatLE(value, index * 4));
  return buffer.toString('base64');
}
