/**
 * A chat completion as a Responses API response: the assistant message's thinking, text, refusal and
 * tool calls become output items in the order OpenAI's API lists them (reasoning, message, calls).
 * @see https://platform.openai.com/docs/api-reference/responses/object
 */
import { newId } from '../../core/ids';
import type { AssistantMessage, ChatCompletion, FinishReason, Usage } from '../openai-format/types';
import { outputText } from './response-object';
import type { OutputItem, OutputTextPart, RefusalPart, ResponseObject, ResponseUsage } from './types';

/** Chat usage in the Responses API's words; the detail counts are always present there, zero when unknown. */
export function usageFromChat(usage: Usage | undefined): ResponseUsage | null {
  if (usage === undefined || usage === null) return null;
  const input = usage.prompt_tokens ?? 0;
  const output = usage.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens ?? input + output,
  };
}

/** The response `base` (the request echoed, see baseResponse) with the completion's answer. */
export function responseFromChat(completion: ChatCompletion, base: ResponseObject): ResponseObject {
  const choice = completion.choices?.[0];
  const message: AssistantMessage = choice?.message ?? { role: 'assistant', content: null };
  const ending = endingOf(choice?.finish_reason ?? null);
  const output = outputItems(message, ending.status === 'incomplete' ? 'incomplete' : 'completed');
  return {
    ...base,
    // The model that answered, as OpenAI names the snapshot rather than the alias asked for.
    model: typeof completion.model === 'string' && completion.model !== '' ? completion.model : base.model,
    status: ending.status,
    incomplete_details: ending.details,
    output,
    output_text: outputText(output),
    usage: usageFromChat(completion.usage),
  };
}

/** How the response ended: OpenAI's Responses API reports a cut-off answer as incomplete, with why. */
export function endingOf(finishReason: FinishReason | null): { status: 'completed' | 'incomplete'; details: { reason: string } | null } {
  if (finishReason === 'length') return { status: 'incomplete', details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') return { status: 'incomplete', details: { reason: 'content_filter' } };
  return { status: 'completed', details: null };
}

type ItemStatus = 'completed' | 'incomplete';

function outputItems(message: AssistantMessage, status: ItemStatus): OutputItem[] {
  const output: OutputItem[] = [];
  const reasoning = reasoningItem(message);
  if (reasoning !== null) output.push(reasoning);
  const calls = (message.tool_calls ?? []).map((call): OutputItem => functionCallItem(call, status));
  const content = messageContent(message);
  // An answer with nothing at all still gets its (empty) message, so clients reading the message find one.
  if (content.length > 0 || (calls.length === 0 && reasoning === null)) {
    output.push({ type: 'message', id: newId('msg'), role: 'assistant', status, content: content.length > 0 ? content : [textPart('')] });
  }
  output.push(...calls);
  return output;
}

function textPart(text: string): OutputTextPart {
  return { type: 'output_text', text, annotations: [] };
}

function messageContent(message: AssistantMessage): Array<OutputTextPart | RefusalPart> {
  const content: Array<OutputTextPart | RefusalPart> = [];
  const text = messageText(message);
  if (text !== '') content.push(textPart(text));
  if (typeof message.refusal === 'string' && message.refusal !== '') content.push({ type: 'refusal', refusal: message.refusal });
  return content;
}

function messageText(message: AssistantMessage): string {
  if (typeof message.content === 'string') return message.content;
  // Adapters that report content_blocks may leave content empty; the text blocks then hold the answer.
  let text = '';
  for (const block of message.content_blocks ?? []) if (block.type === 'text') text += block.text;
  return text;
}

/** Thinking blocks as OpenAI shows reasoning: a summary, one part per block. Redacted thinking has no text to show. */
function reasoningItem(message: AssistantMessage): OutputItem | null {
  const summary: Array<{ type: 'summary_text'; text: string }> = [];
  for (const block of message.content_blocks ?? []) {
    if (block.type === 'thinking' && block.thinking !== '') summary.push({ type: 'summary_text', text: block.thinking });
  }
  return summary.length === 0 ? null : { type: 'reasoning', id: newId('rs'), summary };
}

function functionCallItem(call: NonNullable<AssistantMessage['tool_calls']>[number], status: ItemStatus): OutputItem {
  // A call cut off by the token limit may have partial arguments: it is marked incomplete like the message.
  return { type: 'function_call', id: newId('fc'), call_id: call.id, name: call.function.name, arguments: call.function.arguments, status };
}
