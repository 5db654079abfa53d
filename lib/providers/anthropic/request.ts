import { badRequest } from '../../core/errors';
import { maxOutputTokens, stopSequences } from '../openai-format/request-helpers';
import type { ChatRequest } from '../openai-format/types';
import type { MessagesBody } from './api';
import { convertMessages } from './convert-messages';
import { prepareTools } from './prepare-tools';

/**
 * `max_tokens` when the client sends none. Anthropic requires it and has no default; 4096 is the
 * largest value every Claude model accepts (Claude 3 Haiku's output limit). With thinking on, the
 * budget comes on top, since `max_tokens` must exceed `thinking.budget_tokens`.
 */
export const defaultMaxTokens = 4096;

/** What the response and stream mappings need to know about the request they answer. */
export interface AnthropicMapping {
  /** The provider name for errors (`anthropic`, or a cloud that serves Claude). */
  provider: string;
  /** Off: thinking blocks come back as `content_blocks`. On: they are left out. */
  strictApiCompliance: boolean;
  /** The forced tool that carries a `response_format` answer; its input becomes the content. */
  jsonTool?: string;
}

export interface MessagesRequest {
  body: MessagesBody;
  mapping: AnthropicMapping;
}

/**
 * OpenAI parameters that are not sent, and why dropping them is harmless:
 * `frequency_penalty`, `presence_penalty` (Anthropic has no repetition penalties; sampling hints),
 * `seed` (best-effort even at OpenAI), `logit_bias` when empty, `service_tier`, `store`, `metadata`,
 * `prompt_cache_key`, `safety_identifier` (OpenAI account features), `reasoning_effort` and
 * `verbosity` (Claude's thinking is opted into with `thinking`), `stream_options` (handled by the
 * gateway), `image_url.detail`, a message's `name`. Anthropic rejects unknown fields, so only the
 * fields below are ever sent.
 */
const rejected: Array<[field: string, when: (request: ChatRequest) => boolean, why: string]> = [
  ['n', (request) => request.n != null && request.n !== 1, 'anthropic returns one choice per request; send n: 1 or several requests'],
  ['logprobs', (request) => request.logprobs === true || request.top_logprobs != null, 'anthropic does not return log probabilities'],
  ['logit_bias', (request) => request.logit_bias != null && Object.keys(request.logit_bias as object).length > 0, 'anthropic has no token biasing'],
  [
    'audio',
    (request) => request.audio != null || (Array.isArray(request.modalities) && request.modalities.includes('audio')),
    'anthropic does not produce audio',
  ],
  [
    'functions',
    (request) => request.functions != null || request.function_call != null,
    'use tools and tool_choice instead of the deprecated functions and function_call',
  ],
  ['prediction', (request) => request.prediction != null, 'anthropic has no predicted outputs'],
];

/**
 * An OpenAI chat request as an Anthropic Messages body (without `model`: see MessagesBody), and the
 * mapping the response and stream need.
 *
 * `max_completion_tokens` (or `max_tokens`) → `max_tokens`, defaulting to {@link defaultMaxTokens};
 * `stop` → `stop_sequences`; `temperature`, `top_p` and Anthropic's own `top_k` as they are
 * (Anthropic's temperature range is 0–1 and it says so when a value is outside); `user` →
 * `metadata.user_id`; `thinking` as it is, only with strict API compliance off.
 * @see https://docs.anthropic.com/en/api/messages
 */
export function toMessagesRequest(request: ChatRequest, options: { provider: string; strictApiCompliance: boolean; stream: boolean }): MessagesRequest {
  for (const [field, when, why] of rejected) {
    if (when(request)) throw badRequest(`${field} is not supported for ${options.provider}: ${why}.`, field, 'unsupported_parameter');
  }
  if (request.thinking != null && options.strictApiCompliance) {
    throw badRequest(
      'thinking is not an OpenAI parameter: send it with strict_api_compliance: false in the config (thinking blocks then come back as content_blocks).',
      'thinking',
      'strict_api_compliance',
    );
  }
  if (!Array.isArray(request.messages)) throw badRequest('messages must be an array.', 'messages', 'invalid_messages');

  const { system, messages } = convertMessages(request.messages);
  const { jsonTool, ...tools } = prepareTools(request);
  const body: MessagesBody = { max_tokens: maxOutputTokens(request) ?? defaultTokens(request), messages };
  if (system !== undefined) body.system = system;
  const stop = stopSequences(request.stop);
  if (stop?.length) body.stop_sequences = stop;
  if (typeof request.temperature === 'number') body.temperature = request.temperature;
  if (typeof request.top_p === 'number') body.top_p = request.top_p;
  if (typeof request.top_k === 'number') body.top_k = request.top_k;
  if (typeof request.user === 'string' && request.user) body.metadata = { user_id: request.user };
  if (tools.tools) body.tools = tools.tools;
  if (tools.tool_choice) body.tool_choice = tools.tool_choice;
  if (request.thinking != null) body.thinking = request.thinking;
  if (options.stream) body.stream = true;

  const mapping: AnthropicMapping = { provider: options.provider, strictApiCompliance: options.strictApiCompliance };
  if (jsonTool) mapping.jsonTool = jsonTool;
  return { body, mapping };
}

function defaultTokens(request: ChatRequest): number {
  const budget = request.thinking?.type === 'enabled' ? request.thinking.budget_tokens : undefined;
  return typeof budget === 'number' ? budget + defaultMaxTokens : defaultMaxTokens;
}
