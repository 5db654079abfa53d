import { chatCompletion, newCompletionId } from '../openai-format/chunk-emitter';
import type { TokenUsage } from '../../core/usage';
import type { AssistantMessage, ChatCompletion, ToolCall } from '../openai-format/types';
import type { GeminiCandidate, GenerateContentResponse } from './api';
import { mapFinishReason } from './finish-reason';
import { newToolCallId } from './tool-call-id';
import { toUsage } from './usage';

export interface ReadOptions {
  /** The model the client asked for, used when Gemini does not say `modelVersion`. */
  model: string;
  /** Off: thought summaries come back as `content_blocks` of type `thinking`. */
  strictApiCompliance: boolean;
}

/** Gemini's `responseId` as the completion id, so the two can be matched up in logs. */
export function completionIdOf(response: GenerateContentResponse): string {
  return response.responseId ? `chatcmpl-${response.responseId}` : newCompletionId();
}

/**
 * A `GenerateContentResponse` as a `chat.completion`: one choice per candidate, text parts joined
 * as the content, function calls as tool calls with made-up ids. A prompt Gemini blocked
 * (`promptFeedback.blockReason`, no candidates) is an empty answer with `content_filter`.
 * @see https://ai.google.dev/api/generate-content#generatecontentresponse
 */
export function toChatCompletion(response: GenerateContentResponse, options: ReadOptions): { completion: ChatCompletion; usage?: TokenUsage } {
  const candidates = response.candidates ?? [];
  const usage = toUsage(response.usageMetadata);
  const completion = chatCompletion({
    id: completionIdOf(response),
    model: response.modelVersion ?? options.model,
    message: { role: 'assistant', content: null },
    finishReason: response.promptFeedback?.blockReason ? 'content_filter' : 'stop',
    usage,
  });
  if (candidates.length) {
    completion.choices = candidates.map((candidate, position) => {
      const message = messageOf(candidate, options.strictApiCompliance);
      return {
        index: candidate.index ?? position,
        message,
        finish_reason: mapFinishReason(candidate.finishReason, Boolean(message.tool_calls)),
        logprobs: null,
      };
    });
  }
  return { completion, usage };
}

function messageOf(candidate: GeminiCandidate, strictApiCompliance: boolean): AssistantMessage {
  let text: string | undefined;
  const toolCalls: ToolCall[] = [];
  const blocks: NonNullable<AssistantMessage['content_blocks']> = [];
  for (const part of candidate.content?.parts ?? []) {
    if (part.functionCall) {
      toolCalls.push({
        id: newToolCallId(part.thoughtSignature),
        type: 'function',
        function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
      });
    } else if (typeof part.text === 'string') {
      if (part.thought) blocks.push({ type: 'thinking', thinking: part.text });
      else {
        text = (text ?? '') + part.text;
        blocks.push({ type: 'text', text: part.text });
      }
    }
  }
  const message: AssistantMessage = { role: 'assistant', content: text ?? null };
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (!strictApiCompliance && blocks.some((block) => block.type === 'thinking')) message.content_blocks = blocks;
  return message;
}
