/**
 * A Responses create as the core runs it, for a live request and a background worker alike: one
 * `responses` inference request whose body carries the whole conversation (so that any provider,
 * native or translated, can answer it), with `truncation: "auto"` sending shorter conversations
 * again where the model cannot take it; and what the answer tells about where it was made.
 */
import { GatewayError } from '../core/errors';
import type { InferenceResult } from '../inference/context';
import { credentialFingerprint, type NativeResponseLink, type ResponsesChain } from '../providers/responses-format/chain';
import { toChatRequest } from '../providers/responses-format/to-chat';
import type { ConversationItem, ResponseObject, ResponsesRequest } from '../providers/responses-format/types';
import type { JsonObject } from '../providers/types';
import { stampOf } from './stamped-events';
import { runTruncating } from './truncation';

/** The conversation a response continues: the earlier one's items, and where it was made natively. */
export interface Continued {
  history: ConversationItem[];
  link?: NativeResponseLink;
}

/**
 * The core body: the request with its conversation in `input` (the history, then the new input),
 * without what only the gateway acts on (`previous_response_id`, `background`).
 */
export function responsesBody(request: ResponsesRequest, conversation: ConversationItem[] | ResponsesRequest['input']): JsonObject {
  const { previous_response_id: _previous, background: _background, ...body } = request;
  return { ...body, input: conversation };
}

/** The new input as items, to follow a history. */
function inputList(request: ResponsesRequest): ConversationItem[] {
  if (typeof request.input === 'string') return [{ type: 'message', role: 'user', content: request.input }];
  return Array.isArray(request.input) ? request.input : [];
}

/**
 * Runs the create: `run` makes and runs one inference request of a body and chain. A conversation
 * the gateway shortened is not what the provider holds, so its chain names no native response.
 */
export function runResponse(
  request: ResponsesRequest,
  continued: Continued,
  run: (body: JsonObject, chain: ResponsesChain | undefined) => Promise<InferenceResult>,
): Promise<InferenceResult> {
  const { history } = continued;
  if (history.length === 0 && request.truncation !== 'auto') return run(responsesBody(request, request.input), undefined);
  const whole = [...history, ...inputList(request)];
  if (request.truncation !== 'auto') return run(responsesBody(request, whole), { link: continued.link, historyLength: history.length });
  const earlier = new Set<unknown>(history);
  return runTruncating(request, whole, (conversation) => {
    if (conversation.length === whole.length) return run(responsesBody(request, conversation), { link: continued.link, historyLength: history.length });
    // Truncation keeps the order, so what is left of the history still comes first.
    const historyLength = conversation.filter((item) => earlier.has(item)).length;
    return run(responsesBody(request, conversation), historyLength > 0 ? { historyLength } : undefined);
  });
}

/**
 * Where the answer was made natively, when a continuation can name it there: a provider that runs
 * the Responses API answered (not the cache, whose answer may belong to another conversation) and
 * kept it (`store` not false).
 */
export function nativeLinkOf(result: InferenceResult, request: ResponsesRequest, providerId: string | undefined): NativeResponseLink | undefined {
  const { target } = result;
  if (!target || !providerId || request.store === false || !target.provider.operations.includes('responses')) return undefined;
  if (result.cacheStatus === 'HIT' || result.cacheStatus === 'SEMANTIC HIT') return undefined;
  return { providerResponseId: providerId, provider: target.provider.name, baseUrl: target.baseUrl, credential: credentialFingerprint(target) };
}

/** A whole answer with the gateway's stamp, and the id its provider gave it. */
export function stampedAnswer(answer: ResponseObject, base: ResponseObject): { response: ResponseObject; providerId: string | undefined } {
  return { response: { ...answer, ...stampOf(base) }, providerId: typeof answer.id === 'string' ? answer.id : undefined };
}

/**
 * Refusals that depend on the provider: what only a provider that runs the Responses API natively
 * takes (built-in tools and their items), which a target of the request may be.
 */
const nativeOnlyRefusals = new Set(['unsupported_tool', 'unsupported_input_item', 'invalid_tool_choice']);

/**
 * A 400 now for a request that no provider could take, as the translation would refuse it; what
 * a native provider could take is left for the attempt to judge. For work that runs later (a
 * background response), so that it is refused at its create rather than failing in the worker.
 */
export function checkConversation(request: ResponsesRequest, history: ConversationItem[]): void {
  try {
    toChatRequest(request, history);
  } catch (error) {
    if (error instanceof GatewayError && error.code !== null && nativeOnlyRefusals.has(error.code)) return;
    throw error;
  }
}
