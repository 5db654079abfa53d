import type { GatewayError } from '../../core/errors';
// The modules themselves, not the provider's index: that holds the definition, which loads this adapter.
import { readAnthropicError } from '../anthropic/errors';
import { toMessagesRequest } from '../anthropic/request';
import { readMessageResponse } from '../anthropic/response';
import { anthropicStreamTransform } from '../anthropic/stream';
import { googleError } from '../google/errors';
import type { ChatRequest } from '../openai-format/types';
import type { PreparedCall, ProviderCall } from '../types';

/** The Messages API version Vertex AI serves Claude under (sent in the body, not a header). */
export const vertexAnthropicVersion = 'vertex-2023-10-16';

/**
 * A chat call to a Claude model on Vertex AI: the Anthropic Messages mapping, posted to
 * `…/publishers/anthropic/models/{model}:rawPredict` (`:streamRawPredict` when streaming) with
 * `anthropic_version` in the body and no `model` (the URL names it). The answer is Anthropic's.
 * @see https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/use-claude
 */
export function prepareVertexClaude(call: ProviderCall, modelUrl: string): PreparedCall {
  const provider = call.target.provider.name;
  const request = call.body as ChatRequest;
  const { body, mapping } = toMessagesRequest(request, { provider, strictApiCompliance: call.strictApiCompliance, stream: call.stream });
  const headers: Record<string, string> = {
    ...call.forwardHeaders,
    'content-type': 'application/json',
    accept: call.stream ? 'text/event-stream' : 'application/json',
  };
  if (call.requestHeaders['anthropic-beta']) headers['anthropic-beta'] = call.requestHeaders['anthropic-beta'];
  return {
    url: new URL(`${modelUrl}:${call.stream ? 'streamRawPredict' : 'rawPredict'}`),
    headers,
    body: JSON.stringify({ anthropic_version: vertexAnthropicVersion, ...body }),
    readError: (status, bytes) => vertexClaudeError(provider, status, bytes),
    readResponse: (bytes) => readMessageResponse(bytes, mapping),
    streamTransform: (onUsage) =>
      anthropicStreamTransform({ ...mapping, model: request.model, includeUsage: request.stream_options?.include_usage === true, onUsage }),
  };
}

/** Claude's own errors come in Anthropic's shape; Vertex's (auth, quota, unknown model) in Google's. */
function vertexClaudeError(provider: string, status: number, bytes: Buffer): GatewayError {
  let anthropicShaped = false;
  try {
    anthropicShaped = JSON.parse(bytes.toString('utf8'))?.type === 'error';
  } catch {
    // neither: the generic reader below copes
  }
  return anthropicShaped ? readAnthropicError(provider, status, bytes) : googleError(provider, status, bytes);
}
