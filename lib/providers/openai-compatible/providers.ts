import type { AuthScheme, JsonObject } from '../types';
import { maxTokensOnly, mistralRequest } from './mistral';

/**
 * One row per OpenAI-compatible provider: same request, response and stream format, different base
 * URL, auth and quirks. Adding a provider of this family is adding a row.
 */
export interface OpenAICompatibleProvider {
  name: string;
  baseUrl: string;
  /** Omitted for providers that need no key (a local Ollama). */
  auth?: AuthScheme;
  /** Serves OpenAI's Batch API (files with purpose `batch`, `/batches`): a `24h` batch runs there. */
  batchApi?: boolean;
  /**
   * Runs OpenAI's Responses API itself (`/responses`): Responses requests are sent to it as they are
   * (responses-format/native.ts) rather than translated to chat, so its stored state, built-in tools
   * and reasoning carry over.
   */
  responsesApi?: boolean;
  /**
   * How streamed usage is obtained: `stream_options` asks for it with `stream_options.include_usage`;
   * `always` means the provider reports it in its final chunks unasked (and may reject the option).
   */
  streamUsage: 'stream_options' | 'always';
  /** Adjusts a request body for the provider (renamed or unsupported parameters). */
  mapRequest?: (body: JsonObject) => JsonObject;
  /** Maps a provider-specific finish reason to OpenAI's. */
  finishReasons?: Record<string, string>;
  /**
   * Finish reasons that mean the provider failed mid-generation (OpenAI has no such reason): the
   * answer becomes a 502 error, or, when streaming, an error event and `[DONE]` after what was sent.
   */
  errorFinishReasons?: readonly string[];
  /**
   * Makes, per stream, a hook that sees the data of each JSON chunk first: it returns the data to
   * relay (the same string, or a changed one) or undefined to drop the event.
   */
  streamChunkHook?: () => (data: string) => string | undefined;
}

const bearer: AuthScheme = { header: 'authorization', prefix: 'Bearer ' };

export const openAICompatibleProviders: readonly OpenAICompatibleProvider[] = [
  { name: 'openai', baseUrl: 'https://api.openai.com/v1', auth: bearer, streamUsage: 'stream_options', batchApi: true, responsesApi: true },
  { name: 'groq', baseUrl: 'https://api.groq.com/openai/v1', auth: bearer, streamUsage: 'stream_options', batchApi: true },
  {
    name: 'together-ai',
    baseUrl: 'https://api.together.xyz/v1',
    auth: bearer,
    streamUsage: 'stream_options',
    finishReasons: { eos: 'stop' },
    batchApi: true,
  },
  { name: 'fireworks-ai', baseUrl: 'https://api.fireworks.ai/inference/v1', auth: bearer, streamUsage: 'stream_options' },
  {
    name: 'deepseek',
    baseUrl: 'https://api.deepseek.com',
    auth: bearer,
    streamUsage: 'stream_options',
    mapRequest: maxTokensOnly,
    finishReasons: { insufficient_system_resource: 'length' },
  },
  { name: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1', auth: bearer, streamUsage: 'stream_options' },
  { name: 'ollama', baseUrl: 'http://localhost:11434/v1', streamUsage: 'stream_options' },
  {
    name: 'mistral-ai',
    baseUrl: 'https://api.mistral.ai/v1',
    auth: bearer,
    streamUsage: 'always',
    mapRequest: mistralRequest,
    finishReasons: { model_length: 'length' },
    errorFinishReasons: ['error'],
  },
  { name: 'x-ai', baseUrl: 'https://api.x.ai/v1', auth: bearer, streamUsage: 'stream_options' },
  { name: 'perplexity-ai', baseUrl: 'https://api.perplexity.ai', auth: bearer, streamUsage: 'always' },
  { name: 'cerebras', baseUrl: 'https://api.cerebras.ai/v1', auth: bearer, streamUsage: 'stream_options' },
  { name: 'deepinfra', baseUrl: 'https://api.deepinfra.com/v1/openai', auth: bearer, streamUsage: 'stream_options' },
  { name: 'nebius', baseUrl: 'https://api.studio.nebius.com/v1', auth: bearer, streamUsage: 'stream_options' },
  { name: 'sambanova', baseUrl: 'https://api.sambanova.ai/v1', auth: bearer, streamUsage: 'stream_options' },
  { name: 'lambda', baseUrl: 'https://api.lambda.ai/v1', auth: bearer, streamUsage: 'stream_options' },
  { name: 'hyperbolic', baseUrl: 'https://api.hyperbolic.xyz/v1', auth: bearer, streamUsage: 'stream_options' },
  { name: 'novita-ai', baseUrl: 'https://api.novita.ai/v3/openai', auth: bearer, streamUsage: 'stream_options' },
];
