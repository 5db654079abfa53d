import { GatewayError } from '../../core/errors';
import type { TokenUsage } from '../../core/usage';
import { chatCompletion } from '../openai-format/chunk-emitter';
import type { AssistantMessage, ToolCall } from '../openai-format/types';
import type { ConverseResponse } from './api';
import { providerName } from './errors';
import { mapStopReason } from './finish-reason';
import { mapUsage } from './usage';

export interface ResponseContext {
  model: string;
  strict: boolean;
  responseTool?: string;
}

/**
 * A Converse response as a `chat.completion`: text blocks → `content`, `toolUse` blocks →
 * `tool_calls` (the id is Bedrock's `toolUseId`, the arguments its `input` as JSON), reasoning →
 * `content_blocks` (only with strict API compliance off). Bedrock returns no id, so one is made.
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_ResponseSyntax
 */
export function readConverseResponse(bytes: Buffer, context: ResponseContext): { body: string; usage?: TokenUsage } {
  let parsed: ConverseResponse;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new GatewayError(502, 'Bedrock answered with a body that is not JSON.', { code: 'provider_response_unreadable', provider: providerName });
  }
  if (!parsed || typeof parsed !== 'object') {
    throw new GatewayError(502, 'Bedrock answered with a body that is not a Converse response.', {
      code: 'provider_response_unreadable',
      provider: providerName,
    });
  }
  let text = '';
  let answeredWithResponseTool = false;
  const toolCalls: ToolCall[] = [];
  const blocks: NonNullable<AssistantMessage['content_blocks']> = [];
  for (const block of parsed.output?.message?.content ?? []) {
    if ('text' in block && typeof block.text === 'string') {
      text += block.text;
      blocks.push({ type: 'text', text: block.text });
    } else if ('toolUse' in block && block.toolUse) {
      const { toolUseId, name, input } = block.toolUse;
      const args = JSON.stringify(input ?? {});
      if (context.responseTool && name === context.responseTool) {
        text += args;
        answeredWithResponseTool = true;
      } else {
        toolCalls.push({ id: toolUseId, type: 'function', function: { name, arguments: args } });
      }
    } else if ('reasoningContent' in block && block.reasoningContent) {
      const { reasoningText, redactedContent } = block.reasoningContent;
      if (reasoningText)
        blocks.push({ type: 'thinking', thinking: reasoningText.text, ...(reasoningText.signature ? { signature: reasoningText.signature } : {}) });
      else if (redactedContent) blocks.push({ type: 'redacted_thinking', data: redactedContent });
    }
  }
  const message: AssistantMessage = { role: 'assistant', content: text || (toolCalls.length ? null : '') };
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (!context.strict && blocks.some((block) => block.type !== 'text')) message.content_blocks = blocks;
  let finishReason = mapStopReason(parsed.stopReason);
  // The forced response tool is how the answer arrived, not a call for the client to make.
  if (answeredWithResponseTool && finishReason === 'tool_calls' && toolCalls.length === 0) finishReason = 'stop';
  const usage = mapUsage(parsed.usage);
  return { body: JSON.stringify(chatCompletion({ model: context.model, message, finishReason, usage })), usage };
}
