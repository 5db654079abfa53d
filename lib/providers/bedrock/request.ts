import { badRequest } from '../../core/errors';
import { maxOutputTokens, stopSequences } from '../openai-format/request-helpers';
import type { ChatRequest } from '../openai-format/types';
import type { ConverseRequest, InferenceConfig } from './api';
import { convertMessages } from './convert-messages';
import { prepareTools } from './prepare-tools';

export interface ConverseCall {
  request: ConverseRequest;
  /** Set when `response_format` is emulated with this forced tool (see prepare-tools.ts). */
  responseTool?: string;
}

/**
 * Converse's own top-level fields, passed through when a client sends them under their Bedrock
 * names (guardrails, latency-optimised inference, invocation-log metadata, prompt variables).
 */
const nativeFields = ['guardrailConfig', 'performanceConfig', 'requestMetadata', 'additionalModelResponseFieldPaths', 'promptVariables'] as const;

/**
 * An OpenAI chat request as a Converse request.
 * - `max_completion_tokens`/`max_tokens`, `temperature`, `top_p`, `stop` → `inferenceConfig`
 *   (no default max: Bedrock applies the model's own).
 * - `additionalModelRequestFields` only for what AWS documents: `top_k` and (strict API compliance
 *   off) `thinking` for Anthropic models; a client's own `additionalModelRequestFields` object is
 *   merged in as sent.
 * - `n` > 1 is a 400: Converse returns one answer.
 * - Dropped, because Converse has no such field and leaving them out keeps the answer's meaning:
 *   `seed`, `presence_penalty`, `frequency_penalty`, `logit_bias`, `logprobs`, `top_logprobs`
 *   (the answer carries `logprobs: null`), `user`, `metadata`, `store`, `service_tier`,
 *   `parallel_tool_calls`, `reasoning_effort`, `stream_options` (usage is always reported) and any
 *   other field Converse would reject as unknown.
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_RequestSyntax
 * @see https://docs.aws.amazon.com/bedrock/latest/userguide/conversation-inference-call.html (additionalModelRequestFields, top_k)
 * @see https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-extended-thinking.html
 */
export async function buildConverseRequest(body: ChatRequest, strict: boolean): Promise<ConverseCall> {
  if (typeof body.n === 'number' && body.n > 1) {
    throw badRequest(
      'n > 1 is not supported for Bedrock: Converse returns one answer per request. Send several requests instead.',
      'n',
      'unsupported_parameter',
    );
  }
  const converted = await convertMessages(body.messages, strict);
  if (converted.messages.length === 0) {
    throw badRequest(
      'messages needs at least one user message for Bedrock (system messages alone are not a conversation).',
      'messages',
      'missing_required_parameter',
    );
  }
  const request: ConverseRequest = { messages: converted.messages };
  if (converted.system.length > 0) request.system = converted.system;

  const inference: InferenceConfig = {};
  const maxTokens = maxOutputTokens(body);
  if (maxTokens != null) inference.maxTokens = maxTokens;
  if (body.temperature != null) inference.temperature = body.temperature;
  if (body.top_p != null) inference.topP = body.top_p;
  const stop = stopSequences(body.stop);
  if (stop?.length) inference.stopSequences = stop;
  if (Object.keys(inference).length > 0) request.inferenceConfig = inference;

  const tools = prepareTools(body, converted);
  if (tools.toolConfig) request.toolConfig = tools.toolConfig;

  const additional = additionalFields(body, strict);
  if (additional) request.additionalModelRequestFields = additional;
  for (const field of nativeFields) {
    if (body[field] != null && typeof body[field] === 'object') (request as unknown as Record<string, unknown>)[field] = body[field];
  }
  return { request, responseTool: tools.responseTool };
}

function additionalFields(body: ChatRequest, strict: boolean): Record<string, unknown> | undefined {
  const fields: Record<string, unknown> = {};
  const anthropic = /(^|[.:/])anthropic\./.test(body.model);
  if (anthropic && typeof body.top_k === 'number') fields.top_k = body.top_k;
  // The spec lets the thinking parameter through only when strict API compliance is off.
  if (anthropic && !strict && body.thinking && typeof body.thinking === 'object') fields.thinking = body.thinking;
  const own = body.additionalModelRequestFields;
  if (own !== undefined) {
    if (own === null || typeof own !== 'object' || Array.isArray(own)) {
      throw badRequest('additionalModelRequestFields must be an object of model-specific fields.', 'additionalModelRequestFields', 'invalid_type');
    }
    Object.assign(fields, own);
  }
  return Object.keys(fields).length > 0 ? fields : undefined;
}
