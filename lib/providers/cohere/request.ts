import { badRequest } from '../../core/errors';
import { maxOutputTokens, stopSequences } from '../openai-format/request-helpers';
import type { ChatRequest, FunctionTool } from '../openai-format/types';
import type { CohereChatBody, CohereTool } from './api';
import { convertMessages } from './convert-messages';

/**
 * OpenAI parameters Cohere cannot honour and whose absence would change the answer: a 400 naming
 * why. Others are left out because nothing depends on them: `user`, `metadata`, `store`,
 * `service_tier` (OpenAI account features), `stream_options` (Cohere always reports usage at the
 * end of a stream), `parallel_tool_calls` (Cohere decides how many calls to make and has no
 * switch), `reasoning_effort` (Cohere's reasoning models think by default; `thinking` sets it).
 */
function rejectUnsupported(request: ChatRequest): void {
  const reject = (field: string, why: string) => {
    throw badRequest(`${field} is not supported for cohere: ${why}.`, field, 'unsupported_parameter');
  };
  if (request.n != null && request.n !== 1) reject('n', 'cohere returns one choice per request; send n: 1 or several requests');
  if (request.logprobs === true || request.top_logprobs != null) reject('logprobs', 'the gateway does not translate cohere log probabilities');
  if (request.logit_bias != null && Object.keys(request.logit_bias as object).length > 0) reject('logit_bias', 'cohere has no token biasing');
  if (request.audio != null || (Array.isArray(request.modalities) && request.modalities.includes('audio'))) reject('audio', 'cohere does not produce audio');
  if (request.functions != null || request.function_call != null)
    reject('functions', 'use tools and tool_choice instead of the deprecated functions and function_call');
  if (request.prediction != null) reject('prediction', 'cohere has no predicted outputs');
}

/** Cohere-only parameters a client may send along; they go to Cohere as they are. */
const cohereParameters = ['documents', 'citation_options', 'safety_mode', 'strict_tools', 'priority', 'k', 'p'] as const;

export interface CohereMapping {
  model: string;
  /** Off: thinking and tool plans come back as `content_blocks`. On: they are left out. */
  strictApiCompliance: boolean;
}

/**
 * An OpenAI chat request as a Cohere v2 chat body: `max_completion_tokens` (or `max_tokens`) →
 * `max_tokens`; `stop` → `stop_sequences`; `top_p` → `p` (held within Cohere's 0.01–0.99); `top_k` → `k`; `temperature`, `seed`,
 * `frequency_penalty` and `presence_penalty` as they are; `response_format` → Cohere's
 * `json_object` (with the `json_schema` when one is given); tools and `tool_choice` as
 * {@link prepareTools} says; `thinking` (`budget_tokens` → `token_budget`) with strict API
 * compliance off.
 * @see https://docs.cohere.com/reference/chat
 */
export function toChatBody(request: ChatRequest, options: { strictApiCompliance: boolean; stream: boolean }): CohereChatBody {
  rejectUnsupported(request);
  if (request.thinking != null && options.strictApiCompliance) {
    throw badRequest(
      'thinking is not an OpenAI parameter: send it with strict_api_compliance: false in the config (thinking then comes back as content_blocks).',
      'thinking',
      'strict_api_compliance',
    );
  }
  const body: CohereChatBody = { model: request.model, messages: convertMessages(request.messages) };
  if (options.stream) body.stream = true;
  Object.assign(body, prepareTools(request));
  const maxTokens = maxOutputTokens(request);
  if (maxTokens != null) body.max_tokens = maxTokens;
  const stop = stopSequences(request.stop);
  if (stop?.length) body.stop_sequences = stop;
  for (const field of ['temperature', 'seed', 'frequency_penalty', 'presence_penalty'] as const) {
    if (typeof request[field] === 'number') body[field] = request[field];
  }
  // Cohere's p must lie within 0.01–0.99; OpenAI's common top_p of 1 (no cut) is nearest to 0.99.
  if (typeof request.top_p === 'number') body.p = Math.min(0.99, Math.max(0.01, request.top_p));
  if (typeof request.top_k === 'number') body.k = request.top_k;
  const format = request.response_format;
  if (format?.type === 'json_object') body.response_format = { type: 'json_object' };
  else if (format?.type === 'json_schema') body.response_format = { type: 'json_object', json_schema: format.json_schema?.schema ?? {} };
  if (request.thinking) {
    body.thinking = { type: request.thinking.type === 'disabled' ? 'disabled' : 'enabled' };
    if (typeof request.thinking.budget_tokens === 'number') body.thinking.token_budget = request.thinking.budget_tokens;
  }
  for (const field of cohereParameters) if (request[field] !== undefined) (body as Record<string, unknown>)[field] = request[field];
  return body;
}

/**
 * Tools are OpenAI's shape already (`strict` aside: Cohere's `strict_tools` is set when every tool
 * asks for it). `tool_choice`: `required` → `REQUIRED`, `none` → `NONE`, `auto` → left out (Cohere's
 * default). A named function has no Cohere form; sending only that tool with `REQUIRED` means the
 * same — the model must call it.
 * @see https://docs.cohere.com/docs/tool-use-usage-patterns#forcing-tool-usage
 */
export function prepareTools(request: ChatRequest): Pick<CohereChatBody, 'tools' | 'tool_choice' | 'strict_tools'> {
  if (request.tools == null) {
    if (request.tool_choice != null && request.tool_choice !== 'none' && request.tool_choice !== 'auto')
      throw badRequest('tool_choice needs tools.', 'tool_choice', 'invalid_tool_choice');
    return {};
  }
  if (!Array.isArray(request.tools)) throw badRequest('tools must be an array of function tools.', 'tools', 'invalid_tools');
  let tools = request.tools.map(toTool);
  const choice = request.tool_choice;
  const prepared: Pick<CohereChatBody, 'tools' | 'tool_choice' | 'strict_tools'> = {};
  if (choice === 'required') prepared.tool_choice = 'REQUIRED';
  else if (choice === 'none') prepared.tool_choice = 'NONE';
  else if (typeof choice === 'object' && choice !== null) {
    const name = choice.function?.name;
    tools = tools.filter((tool) => tool.function.name === name);
    if (tools.length === 0) throw badRequest(`tool_choice names the function "${String(name)}", which is not in tools.`, 'tool_choice', 'invalid_tool_choice');
    prepared.tool_choice = 'REQUIRED';
  } else if (choice != null && choice !== 'auto') {
    throw badRequest('tool_choice must be "auto", "none", "required" or {"type":"function","function":{"name":…}}.', 'tool_choice', 'invalid_tool_choice');
  }
  if (tools.length) prepared.tools = tools;
  if (request.tools.length > 0 && request.tools.every((tool) => tool.function?.strict === true)) prepared.strict_tools = true;
  return prepared;
}

function toTool(tool: FunctionTool, index: number): CohereTool {
  if (tool?.type !== 'function' || typeof tool.function?.name !== 'string') {
    throw badRequest(`tools[${index}] must be {"type":"function","function":{"name":…}}; cohere has no other tool types.`, `tools[${index}]`, 'invalid_tools');
  }
  const converted: CohereTool = { type: 'function', function: { name: tool.function.name } };
  if (tool.function.description) converted.function.description = tool.function.description;
  if (tool.function.parameters) converted.function.parameters = tool.function.parameters;
  return converted;
}
