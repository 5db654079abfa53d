import { GatewayError } from '../../core/errors';
import { chatCompletion } from '../openai-format/chunk-emitter';
import type { TokenUsage } from '../../core/usage';
import type { AssistantMessage, ChatCompletion, FinishReason, ToolCall } from '../openai-format/types';
import type { MessageResponse, RedactedThinkingBlock, TextBlock, ThinkingBlock, ToolUseBlock } from './api';
import { mapStopReason } from './finish-reason';
import type { AnthropicMapping } from './request';
import { mapUsage } from './usage';

/**
 * An Anthropic message as an OpenAI `chat.completion`:
 * text blocks joined → `content` (null when the answer is only tool calls); `tool_use` blocks →
 * `tool_calls` (Anthropic's `toolu_…` id, the input as a JSON string); thinking and redacted
 * thinking blocks, with strict API compliance off, → `content_blocks` with the text blocks, in order
 * (left out otherwise); server-tool blocks (web search results…) are skipped. The message id and
 * model are Anthropic's.
 * @see https://docs.anthropic.com/en/api/messages#response
 */
export function fromMessageResponse(response: MessageResponse, mapping: AnthropicMapping): { completion: ChatCompletion; usage?: TokenUsage } {
  let text = '';
  const toolCalls: ToolCall[] = [];
  const blocks: NonNullable<AssistantMessage['content_blocks']> = [];
  let thinking = false;
  let finishReason: FinishReason = mapStopReason(response.stop_reason);
  for (const block of response.content ?? []) {
    switch (block.type) {
      case 'text':
        if (mapping.jsonTool) break;
        text += (block as TextBlock).text;
        blocks.push({ type: 'text', text: (block as TextBlock).text });
        break;
      case 'tool_use': {
        const use = block as ToolUseBlock;
        const input = JSON.stringify(use.input ?? {});
        if (use.name === mapping.jsonTool) {
          // The forced response_format tool: its input is the answer (text around it is not).
          text = input;
          if (finishReason === 'tool_calls') finishReason = 'stop';
        } else toolCalls.push({ id: use.id, type: 'function', function: { name: use.name, arguments: input } });
        break;
      }
      case 'thinking': {
        const { thinking: reasoning, signature } = block as ThinkingBlock;
        blocks.push({ type: 'thinking', thinking: reasoning, signature });
        thinking = true;
        break;
      }
      case 'redacted_thinking':
        blocks.push({ type: 'redacted_thinking', data: (block as RedactedThinkingBlock).data });
        thinking = true;
        break;
      default:
        break;
    }
  }
  const message: AssistantMessage = { role: 'assistant', content: text || toolCalls.length === 0 ? text : null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (thinking && !mapping.strictApiCompliance) message.content_blocks = blocks;
  const usage = response.usage ? mapUsage(response.usage) : undefined;
  return { completion: chatCompletion({ id: response.id, model: response.model, message, finishReason, usage }), usage };
}

/**
 * A complete Messages response body as the OpenAI-format body the gateway answers with. A 200 body
 * that is not a message (not JSON, or an error object) is a 502 naming the provider.
 */
export function readMessageResponse(bytes: Buffer, mapping: AnthropicMapping): { body: string; usage?: TokenUsage } {
  let parsed: MessageResponse | { type: 'error'; content?: undefined; error?: { message?: string } };
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new GatewayError(502, `${mapping.provider} answered 200 with a body that is not JSON.`, {
      code: 'provider_response_unreadable',
      provider: mapping.provider,
    });
  }
  if (parsed?.type === 'error' || !Array.isArray(parsed?.content)) {
    const detail = parsed?.type === 'error' && parsed.error?.message ? `: ${parsed.error.message}` : '';
    throw new GatewayError(502, `${mapping.provider} answered 200 without a message${detail}.`, {
      code: 'provider_response_unreadable',
      provider: mapping.provider,
    });
  }
  const { completion, usage } = fromMessageResponse(parsed, mapping);
  return { body: JSON.stringify(completion), usage };
}
