/**
 * A Responses API call to a provider that does not run that API: translated to a chat completion
 * its adapter already speaks, and the answer (whole or streamed) translated back, so that routing,
 * the cache, the hooks and the logs see the Responses format whichever provider answered.
 */
import { newId } from '../../core/ids';
import type { ChatRequest } from '../openai-format/types';
import { prepareOverChatCall, thinkingProviders } from '../over-chat-call';
import type { JsonObject, PreparedCall, ProviderCall } from '../types';
import { responsesEventStream } from './events-from-chat';
import { responseFromChat } from './from-chat';
import { baseResponse } from './response-object';
import { toChatRequest } from './to-chat';
import type { ResponsesRequest } from './types';

/**
 * `reasoning.effort` as a thinking budget: the budgets Google's own OpenAI-compatible endpoint
 * gives `reasoning_effort`. `none` (and no effort with no summary asked for) turns nothing on.
 */
const budgetByEffort: Record<string, number> = { minimal: 1024, low: 1024, medium: 8192, high: 24576 };
const defaultBudget = budgetByEffort.medium!;

/** Anthropic's smallest thinking budget; a cap below it leaves no room to think. */
const minimumBudget = 1024;

export async function prepareOverChat(call: ProviderCall): Promise<PreparedCall> {
  const request = call.body as ResponsesRequest;
  // `input` holds the whole conversation (see chain.ts); its earlier part is named as the
  // conversation of previous_response_id in errors, and built-in tool activity in it is left out.
  const earlier = call.responsesChain?.historyLength ?? 0;
  const input = Array.isArray(request.input) ? request.input : [];
  const chat: ChatRequest = earlier > 0 ? toChatRequest({ ...request, input: input.slice(earlier) }, input.slice(0, earlier)) : toChatRequest(request, []);
  const thinks = thinkingProviders.has(call.target.provider.name) && askThinking(request, chat);
  // The id and time are the gateway's to give (the route stamps its own); these stand in until then.
  const base = () => baseResponse(request, { id: newId('resp'), createdAt: Math.floor(Date.now() / 1000) });
  return prepareOverChatCall(call, {
    chat: chat as JsonObject,
    thinks,
    answerFromChat: (completion) => responseFromChat(completion, base()),
    eventsFromChat: () => responsesEventStream(base(), () => {}),
  });
}

/**
 * Sets the chat request's thinking budget from `reasoning` (an effort, or a summary asked for),
 * within `max_output_tokens`, which covers thinking at OpenAI as at Anthropic. True when it did.
 */
function askThinking(request: ResponsesRequest, chat: ChatRequest): boolean {
  const effort = request.reasoning?.effort;
  const summary = request.reasoning?.summary;
  if (effort === 'none' || ((effort === undefined || effort === null) && (summary === undefined || summary === null))) return false;
  let budget = (typeof effort === 'string' ? budgetByEffort[effort] : undefined) ?? defaultBudget;
  const cap = request.max_output_tokens;
  if (typeof cap === 'number') budget = Math.min(budget, cap - 1);
  if (budget < minimumBudget) return false;
  chat.thinking = { type: 'enabled', budget_tokens: budget };
  // The budget says how much; an effort name would be read again as one by some adapters.
  delete chat.reasoning_effort;
  return true;
}
