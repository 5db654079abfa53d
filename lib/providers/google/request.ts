import { badRequest } from '../../core/errors';
import { maxOutputTokens, stopSequences } from '../openai-format/request-helpers';
import type { ChatRequest } from '../openai-format/types';
import type { GeminiGenerationConfig, GeminiThinkingConfig, GenerateContentRequest } from './api';
import { convertMessages } from './convert-messages';
import { prepareTools } from './prepare-tools';

/**
 * An OpenAI chat request as a Gemini `GenerateContentRequest`. Mapped: messages, tools and
 * tool_choice, temperature, top_p, top_k, max_(completion_)tokens, stop, n (→ candidateCount, not
 * when streaming), seed, presence/frequency penalties, response_format, reasoning_effort, the
 * gateway's `thinking` parameter (with strict API compliance off, as for every provider) and
 * `safety_settings` (Gemini's own field, passed through). Dropped because the answer is the same
 * without them: user, metadata, store, service_tier, parallel_tool_calls (Gemini decides how many
 * calls to make) and a tool's `strict`. Refused, since the answer would lack what was asked for:
 * see `refused` below.
 * @see https://ai.google.dev/api/generate-content#request-body
 */
export function toGenerateContentRequest(request: ChatRequest, options: { stream: boolean; strictApiCompliance: boolean }): GenerateContentRequest {
  for (const [field, when, why] of refused) {
    if (when(request)) throw badRequest(`${field} is not supported for Gemini: ${why}.`, field, 'unsupported_parameter');
  }
  if (request.thinking != null && options.strictApiCompliance) {
    throw badRequest(
      'thinking is not an OpenAI parameter: send it with strict_api_compliance: false in the config (thought summaries then come back as content_blocks), or use reasoning_effort.',
      'thinking',
      'strict_api_compliance',
    );
  }
  const prompt = convertMessages(request.messages);
  const body: GenerateContentRequest = { ...prompt, ...prepareTools(request) };
  const generationConfig = generationConfigOf(request, options.stream);
  if (Object.keys(generationConfig).length) body.generationConfig = generationConfig;
  const safety = request.safety_settings ?? request.safetySettings;
  if (Array.isArray(safety)) body.safetySettings = safety;
  return body;
}

function generationConfigOf(request: ChatRequest, stream: boolean): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  const set = <K extends keyof GeminiGenerationConfig>(key: K, value: GeminiGenerationConfig[K] | null | undefined) => {
    if (value !== undefined && value !== null) config[key] = value;
  };
  set('temperature', request.temperature);
  set('topP', request.top_p);
  set('topK', request.top_k as number | undefined);
  set('maxOutputTokens', maxOutputTokens(request));
  set('stopSequences', stopSequences(request.stop));
  set('seed', request.seed);
  set('presencePenalty', request.presence_penalty);
  set('frequencyPenalty', request.frequency_penalty);
  if (request.n !== undefined && request.n !== null && request.n !== 1) {
    // The chunk stream has one choice; several candidates can only be returned whole.
    if (stream) throw badRequest('n greater than 1 cannot be streamed from Gemini; send stream: false to get several choices.', 'n', 'unsupported_parameter');
    config.candidateCount = request.n;
  }
  Object.assign(config, responseFormatOf(request));
  set('thinkingConfig', thinkingConfigOf(request));
  return config;
}

/**
 * `json_object` → JSON output; `json_schema` → JSON output that follows the schema, which goes in
 * `responseJsonSchema` as it is (standard JSON Schema, see the `responseJsonSchema` recording).
 * @see https://ai.google.dev/gemini-api/docs/structured-output
 */
function responseFormatOf(request: ChatRequest): GeminiGenerationConfig {
  const format = request.response_format;
  if (!format || format.type === 'text') return {};
  if (format.type === 'json_object') return { responseMimeType: 'application/json' };
  if (format.type === 'json_schema') {
    const schema = format.json_schema?.schema;
    return schema ? { responseMimeType: 'application/json', responseJsonSchema: schema } : { responseMimeType: 'application/json' };
  }
  throw badRequest(
    `response_format.type "${(format as { type: string }).type}" is not one of text, json_object, json_schema.`,
    'response_format',
    'invalid_response_format',
  );
}

const refused: Array<[field: string, when: (request: ChatRequest) => boolean, why: string]> = [
  ['logprobs', (request) => request.logprobs === true || request.top_logprobs != null, 'the gateway does not map Gemini log probabilities'],
  ['logit_bias', (request) => request.logit_bias != null && Object.keys(request.logit_bias as object).length > 0, 'Gemini has no token biasing'],
  ['audio', (request) => request.audio != null || (Array.isArray(request.modalities) && request.modalities.includes('audio')), 'audio output is not mapped'],
];

/** Google's own OpenAI-compatible endpoint maps reasoning_effort to these thinking budgets. */
const budgetByEffort: Record<string, number> = { none: 0, minimal: 1024, low: 1024, medium: 8192, high: 24576 };

/** @see https://ai.google.dev/gemini-api/docs/thinking */
function thinkingConfigOf(request: ChatRequest): GeminiThinkingConfig | undefined {
  const thinking = request.thinking;
  if (thinking?.type === 'enabled') {
    return { includeThoughts: true, ...(thinking.budget_tokens !== undefined ? { thinkingBudget: thinking.budget_tokens } : {}) };
  }
  if (thinking?.type === 'disabled') return { thinkingBudget: 0 };
  const effort = request.reasoning_effort;
  if (effort === undefined || effort === null) return undefined;
  const budget = typeof effort === 'string' ? budgetByEffort[effort] : undefined;
  if (budget === undefined)
    throw badRequest(`reasoning_effort must be one of ${Object.keys(budgetByEffort).join(', ')}.`, 'reasoning_effort', 'invalid_reasoning_effort');
  return { thinkingBudget: budget };
}
