/**
 * The Responses API's `truncation: "auto"`: a conversation too long for the model's context window
 * loses its oldest whole items until it fits. Items go in units, so that what is left still reads
 * as a conversation: a `function_call` with its `function_call_output`(s) (a call without its result,
 * or a result without its call, is refused by every provider), reasoning with the assistant item it
 * led to. The instructions are not items and stay; so do system and developer messages, which steer
 * the whole conversation, and the newest user turn (the last user message and everything after it),
 * which is what the model is asked to answer.
 *
 * The gateway has no tokenizer: tokens are estimated from the UTF-8 size of each item's JSON at the
 * rate limits' bytes per token (ratelimit/estimate.ts), which counts markup as text and so errs on
 * the long side.
 * @see https://platform.openai.com/docs/api-reference/responses/create#responses-create-truncation
 */
import type { GatewayError } from '../core/errors';
import { isPlainObject } from '../core/plain-object';
import { contextWindowOf } from '../pricing/context-windows';
import { bytesPerPromptToken, defaultCompletionTokens } from '../ratelimit/estimate';
import type { ConversationItem, ResponsesRequest } from '../providers/responses-format/types';

/** What each item costs beyond its text: the role and separators the chat format wraps a message in. */
const itemOverheadTokens = 4;

const textTokens = (text: string) => Math.ceil(Buffer.byteLength(text, 'utf8') / bytesPerPromptToken);

/** An item's type; a message may leave it out (OpenAI's "easy input message"), as to-chat.ts reads it. */
function typeOf(item: unknown): string | undefined {
  if (!isPlainObject(item)) return undefined;
  if (typeof item.type === 'string') return item.type;
  return item.type === undefined && item.role !== undefined ? 'message' : undefined;
}

const roleOf = (item: unknown) => (isPlainObject(item) && typeof item.role === 'string' ? item.role : undefined);
const callIdOf = (item: unknown) => (isPlainObject(item) && typeof item.call_id === 'string' ? item.call_id : undefined);

function itemTokens(item: unknown): number {
  // The chat request carries no reasoning (to-chat.ts drops it), so it takes no room in the window.
  if (typeOf(item) === 'reasoning') return 0;
  return textTokens(JSON.stringify(item) ?? '') + itemOverheadTokens;
}

/** Estimated prompt tokens of `items`, plus `extra` (the instructions, the tools' JSON) when given. */
export function estimateTokens(items: ConversationItem[], extra?: string): number {
  let tokens = extra ? textTokens(extra) : 0;
  for (const item of items) tokens += itemTokens(item);
  return tokens;
}

/**
 * The tokens the prompt may take in a window of `contextWindow`: what the answer's room leaves, that
 * room being `max_output_tokens` when the request sets it, else the rate limits' default completion
 * reserve, at most a quarter of the window so that a guess does not take over a small model's window.
 */
export function inputBudget(contextWindow: number, maxOutputTokens?: number | null): number {
  const reserve =
    typeof maxOutputTokens === 'number' && Number.isFinite(maxOutputTokens) && maxOutputTokens > 0
      ? maxOutputTokens
      : Math.min(defaultCompletionTokens, Math.floor(contextWindow / 4));
  return Math.max(0, contextWindow - reserve);
}

/** Items dropped together, by their places in the conversation (ascending); `kept` units are never dropped. */
interface Unit {
  indices: number[];
  kept: boolean;
}

/** The units of `items`, oldest (by its first item) first. */
function unitsOf(items: readonly unknown[]): Unit[] {
  const unitAt: Unit[] = new Array(items.length);
  const byCall = new Map<string, Unit>();
  const newUnit = (): Unit => ({ indices: [], kept: false });

  // Calls first, so that an output joins its call wherever either of them stands.
  items.forEach((item, index) => {
    if (typeOf(item) !== 'function_call') return;
    const callId = callIdOf(item);
    let unit = callId === undefined ? undefined : byCall.get(callId);
    if (!unit) {
      unit = newUnit();
      if (callId !== undefined) byCall.set(callId, unit);
    }
    unitAt[index] = unit;
  });

  let reasoning: number[] = [];
  items.forEach((item, index) => {
    const type = typeOf(item);
    if (type === 'reasoning') {
      reasoning.push(index);
      return;
    }
    let unit = unitAt[index];
    if (!unit) {
      // An output whose call is not in the conversation shares a unit with the other outputs of its call.
      const callId = type === 'function_call_output' ? callIdOf(item) : undefined;
      unit = (callId === undefined ? undefined : byCall.get(callId)) ?? newUnit();
      if (callId !== undefined) byCall.set(callId, unit);
      unitAt[index] = unit;
    }
    if (reasoning.length > 0) {
      // Reasoning leads to the model's next item; before anything else it stands alone.
      const led = type === 'function_call' || (type === 'message' && roleOf(item) === 'assistant');
      const owner = led ? unit : newUnit();
      for (const at of reasoning) unitAt[at] = owner;
      reasoning = [];
    }
  });
  if (reasoning.length > 0) {
    const owner = newUnit();
    for (const at of reasoning) unitAt[at] = owner;
  }

  // The newest user turn is kept; without a user message, the last item (and its unit) is.
  let tail = items.length - 1;
  for (let index = items.length - 1; index >= 0; index--) {
    if (typeOf(items[index]) === 'message' && roleOf(items[index]) === 'user') {
      tail = index;
      break;
    }
  }
  const units: Unit[] = [];
  items.forEach((item, index) => {
    const unit = unitAt[index];
    if (unit.indices.length === 0) units.push(unit);
    unit.indices.push(index);
    const role = typeOf(item) === 'message' ? roleOf(item) : undefined;
    if (index >= tail || role === 'system' || role === 'developer') unit.kept = true;
  });
  return units;
}

/**
 * `items` without their oldest units until their estimate is within `budgetTokens`; when even the
 * units that are kept do not fit, what is left (the provider then says whether it fits).
 */
export function truncateToFit(items: ConversationItem[], budgetTokens: number): { items: ConversationItem[]; dropped: number } {
  const costs = items.map(itemTokens);
  let total = costs.reduce((sum, cost) => sum + cost, 0);
  if (total <= budgetTokens) return { items, dropped: 0 };
  const dropped = new Set<number>();
  for (const unit of unitsOf(items)) {
    if (total <= budgetTokens) break;
    if (unit.kept) continue;
    for (const index of unit.indices) {
      dropped.add(index);
      total -= costs[index];
    }
  }
  return { items: items.filter((_, index) => !dropped.has(index)), dropped: dropped.size };
}

/**
 * `items` without their oldest droppable unit, for another try after the provider's context-length
 * error; undefined when nothing more can go. Units the chat request does not carry (reasoning alone)
 * go along with the next one, since dropping only them would send the same request again.
 */
export function dropOldest(items: ConversationItem[]): ConversationItem[] | undefined {
  const dropped = new Set<number>();
  for (const unit of unitsOf(items)) {
    if (unit.kept) continue;
    for (const index of unit.indices) dropped.add(index);
    if (unit.indices.some((index) => itemTokens(items[index]) > 0)) return items.filter((_, index) => !dropped.has(index));
  }
  return undefined;
}

/**
 * A truncated conversation opens with a user turn, as the first one did: the model's items left in
 * front of it (the answer to a question that was dropped) go too, and so would a call's output whose
 * call went. System and developer messages stay where they are.
 */
export function startAtUserTurn(items: ConversationItem[]): ConversationItem[] {
  const firstUser = items.findIndex((item) => typeOf(item) === 'message' && roleOf(item) === 'user');
  if (firstUser <= 0) return items;
  return items.filter((item, index) => {
    if (index >= firstUser) return true;
    const role = typeOf(item) === 'message' ? roleOf(item) : undefined;
    return role === 'system' || role === 'developer';
  });
}

/**
 * How each provider, as the gateway's adapters pass its error on, says the prompt is longer than the
 * model's context window. Matched on the message, which the adapters keep as the provider wrote it
 * (and which OpenAI-compatible hosts copy from OpenAI), with the number in it left out.
 */
const contextLengthMessages: RegExp[] = [
  // OpenAI and the hosts that copy its wording (Azure OpenAI, vLLM, DeepSeek, OpenRouter, Mistral):
  // "This model's maximum context length is 128000 tokens. However, your messages resulted in …".
  /maximum context length/i,
  // OpenAI's Responses API: "Your input exceeds the context window of this model. …".
  /exceeds? the context window/i,
  // Anthropic, directly and through Bedrock ("The model returned the following errors: prompt is too
  // long: 208656 tokens > 200000 maximum"), and when the input and `max_tokens` together overflow
  // ("input length and `max_tokens` exceed context limit: 189136 + 20000 > 204648, …").
  /prompt is too long/i,
  /exceed context limit/i,
  // Google Gemini and Vertex AI (INVALID_ARGUMENT): "The input token count (1200293) exceeds the
  // maximum number of tokens allowed (1048576)."
  /exceeds the maximum number of tokens allowed/i,
  // Amazon Bedrock (ValidationException): "Input is too long for requested model."
  /input is too long for (?:the )?requested model/i,
  // Cohere: "too many tokens: total number of tokens (prompt and prediction) cannot exceed 2048 -
  // received 6354. …"; Amazon Titan on Bedrock: "Too many input tokens. …".
  /too many (?:input )?tokens/i,
  // llama.cpp's server (exceed_context_size_error): "the request exceeds the available context size, …".
  /exceeds the available context size/i,
  // Hugging Face Text Generation Inference (a 422): "Input validation error: `inputs` tokens +
  // `max_new_tokens` must be <= 8192. Given: …".
  /`?inputs`? tokens \+ `?max_new_tokens`? must be <=/i,
];

/** The statuses a too-long prompt comes back with: 400, 413 (a request too large), 422 (TGI's validation). */
const contextLengthStatuses = new Set([400, 413, 422]);

/** Whether a provider's error says the prompt does not fit the model's context window. */
export function isContextLengthError(error: { status: number; code?: string | null; message: string }): boolean {
  if (!contextLengthStatuses.has(error.status)) return false;
  // OpenAI's code, which Azure OpenAI and OpenAI-compatible hosts (Groq) send too.
  if (error.code === 'context_length_exceeded') return true;
  return typeof error.message === 'string' && contextLengthMessages.some((pattern) => pattern.test(error.message));
}

/** Drops after a provider's context-length error: each try sends one unit less; this bounds the calls. */
const maxContextRetries = 8;

/**
 * The conversation as a `truncation: "auto"` request sends it first: its oldest whole units dropped
 * until it fits the model's window, where the gateway knows the window (lib/pricing/context-windows.ts).
 * The model is the one the request names; a config that routes to another model is caught by the
 * provider's context-length error instead.
 */
export function fitToWindow(request: ResponsesRequest, conversation: ConversationItem[]): ConversationItem[] {
  if (request.truncation !== 'auto') return conversation;
  const window = contextWindowOf(request.model);
  if (window === undefined) return conversation;
  const fixed = `${request.instructions ?? ''}${request.tools ? JSON.stringify(request.tools) : ''}`;
  return startAtUserTurn(truncateToFit(conversation, inputBudget(window, request.max_output_tokens) - estimateTokens([], fixed)).items);
}

/**
 * Runs `attempt` on the conversation, and for a `truncation: "auto"` request whose provider answers
 * that it is too long, again without its oldest unit, until it fits or nothing more can go.
 */
export async function runTruncating<Result extends { outcome: { ok: true } | { ok: false; error: GatewayError } }>(
  request: ResponsesRequest,
  conversation: ConversationItem[],
  attempt: (conversation: ConversationItem[]) => Promise<Result>,
): Promise<Result> {
  let sent = fitToWindow(request, conversation);
  let result = await attempt(sent);
  for (let tries = 0; request.truncation === 'auto' && tries < maxContextRetries; tries++) {
    if (result.outcome.ok || !isContextLengthError(result.outcome.error)) break;
    const fewer = dropOldest(sent);
    if (!fewer) break;
    sent = startAtUserTurn(fewer);
    result = await attempt(sent);
  }
  return result;
}
