/**
 * A chat completion as an Anthropic message: thinking (`content_blocks`), then the text, then one
 * `tool_use` per tool call, the order in which Claude answers; the finish reason as a stop reason,
 * the usage in Anthropic's words.
 * @see https://docs.anthropic.com/en/api/messages#response
 */
import type { AssistantMessage, ChatCompletion, FinishReason, Usage } from '../openai-format/types';
import type { Message, MessagesUsage, ResponseBlock, StopReason } from './types';

/** What the message says of itself that the completion does not: its id, and the model asked for. */
export interface MessageFrame {
  id: string;
  model: string;
}

export function messageFromChat(completion: ChatCompletion, frame: MessageFrame): Message {
  const choice = completion.choices?.[0];
  const message: AssistantMessage = choice?.message ?? { role: 'assistant', content: null };
  const content: ResponseBlock[] = [];
  for (const block of message.content_blocks ?? []) {
    if (block.type === 'thinking') content.push({ type: 'thinking', thinking: block.thinking, signature: block.signature ?? '' });
    else if (block.type === 'redacted_thinking') content.push({ type: 'redacted_thinking', data: block.data });
  }
  const text = typeof message.content === 'string' && message.content ? message.content : message.refusal;
  if (text) content.push({ type: 'text', text });
  for (const call of message.tool_calls ?? []) {
    content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInput(call.function.arguments) });
  }
  const refused = !message.content && typeof message.refusal === 'string' && message.refusal !== '';
  return {
    id: frame.id,
    type: 'message',
    role: 'assistant',
    model: typeof completion.model === 'string' && completion.model ? completion.model : frame.model,
    content,
    stop_reason: refused ? 'refusal' : stopReasonOf(choice?.finish_reason ?? null),
    stop_sequence: null,
    usage: usageFromChat(completion.usage),
  };
}

/**
 * Chat's finish reason as Anthropic's stop reason. Chat does not say which stop sequence ended an
 * answer, so one that stopped at a sequence reads as `end_turn`.
 */
export function stopReasonOf(reason: FinishReason | null): StopReason {
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/**
 * Chat usage as Anthropic counts it: cached prompt tokens are reported apart from `input_tokens`
 * (as `cache_read_input_tokens`), which holds only the rest.
 */
export function usageFromChat(usage: Usage | null | undefined): MessagesUsage & { input_tokens: number; output_tokens: number } {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cached),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  };
}

/**
 * A tool call's arguments as the object Anthropic's `input` is. A model that wrote something else
 * (rare, and only when the provider does not hold it to a schema) gets an empty input rather than
 * losing the whole answer.
 */
export function toolInput(argumentsJson: string | undefined): Record<string, unknown> {
  if (!argumentsJson?.trim()) return {};
  try {
    const parsed: unknown = JSON.parse(argumentsJson);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
