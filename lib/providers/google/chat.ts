import { GatewayError } from '../../core/errors';
import type { ChatRequest } from '../openai-format/types';
import type { PreparedCall, ProviderCall } from '../types';
import type { GenerateContentResponse, GoogleErrorBody } from './api';
import { fromGoogleError, googleError } from './errors';
import { toGenerateContentRequest } from './request';
import { toChatCompletion } from './response';
import { geminiStreamTransform } from './stream';
import { pathSegment } from '../path-segment';

/** Where a Gemini model lives and how to authenticate there (the Gemini API or Vertex AI). */
export interface GeminiEndpoint {
  provider: string;
  /** The model's URL for a method, e.g. `…/models/gemini-2.5-flash:generateContent`. */
  methodUrl(method: string): string;
  headers: Record<string, string>;
}

/** A Gemini model name as one path segment; `@` (Vertex version pins) is left readable. */
export function modelSegment(model: string): string {
  return pathSegment(model, 'model', (value) => encodeURIComponent(value).replace(/%40/g, '@'));
}

/** A 200 body as JSON, or a 502 naming the provider. */
export function readJson<T>(bytes: Buffer, provider: string): T {
  try {
    return JSON.parse(bytes.toString('utf8')) as T;
  } catch {
    throw new GatewayError(502, `${provider} answered 200 with a body that is not JSON.`, { code: 'provider_response_unreadable', provider });
  }
}

/**
 * A chat call to a Gemini model: `:generateContent`, or `:streamGenerateContent?alt=sse` (SSE; the
 * default is a JSON array) when streaming. Shared by the `google` and `vertex-ai` providers.
 */
export function prepareGeminiChat(call: ProviderCall, endpoint: GeminiEndpoint): PreparedCall {
  const { provider } = endpoint;
  const request = call.body as ChatRequest;
  const body = toGenerateContentRequest(request, { stream: call.stream, strictApiCompliance: call.strictApiCompliance });
  const url = call.stream ? `${endpoint.methodUrl('streamGenerateContent')}?alt=sse` : endpoint.methodUrl('generateContent');
  return {
    url: new URL(url),
    headers: {
      ...call.forwardHeaders,
      'content-type': 'application/json',
      accept: call.stream ? 'text/event-stream' : 'application/json',
      ...endpoint.headers,
    },
    body: JSON.stringify(body),
    readError: (status, bytes) => googleError(provider, status, bytes),
    readResponse(bytes) {
      const response = readJson<GenerateContentResponse & Partial<GoogleErrorBody>>(bytes, provider);
      // A 200 that holds an error (the non-SSE stream format can): the error's own code is the status.
      if (response?.error) throw fromGoogleError(provider, 0, response as GoogleErrorBody);
      const { completion, usage } = toChatCompletion(response, { model: request.model, strictApiCompliance: call.strictApiCompliance });
      return { body: JSON.stringify(completion), usage };
    },
    streamTransform: (onUsage) =>
      geminiStreamTransform({
        provider,
        model: request.model,
        includeUsage: request.stream_options?.include_usage === true,
        strictApiCompliance: call.strictApiCompliance,
        onUsage,
      }),
  };
}
