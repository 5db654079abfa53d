import type { Transform } from 'node:stream';
import { GatewayError } from '../../core/errors';
import type { TokenUsage } from '../../core/usage';
import { chatStreamTransform, sseEventDecoder, type SseEvent } from '../openai-format/provider-stream';
import type { GenerateContentResponse, GoogleErrorBody } from './api';
import { fromGoogleError } from './errors';
import { mapFinishReason } from './finish-reason';
import { newToolCallId } from './tool-call-id';
import { toUsage } from './usage';

export interface GeminiStreamOptions {
  provider: string;
  model: string;
  includeUsage: boolean;
  strictApiCompliance: boolean;
  onUsage(usage: TokenUsage): void;
}

/**
 * `:streamGenerateContent?alt=sse` as OpenAI chunks. Every SSE event is a whole
 * `GenerateContentResponse` holding only new text; a function call arrives whole in one chunk, so it
 * is emitted as a tool-call start and its complete arguments. The chunk with `finishReason` ends the
 * choice; usage is cumulative and the last report wins. An `{"error":…}` chunk, or EOF before any
 * finish reason, ends the stream with an error event.
 * @see https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent
 */
export function geminiStreamTransform(options: GeminiStreamOptions): Transform {
  const { provider } = options;
  let toolCalls = 0;
  let finished = false;
  return chatStreamTransform<SseEvent>({
    provider,
    model: options.model,
    includeUsage: options.includeUsage,
    decoder: sseEventDecoder(),
    onUsage: options.onUsage,
    // Gemini has no terminal event, only EOF: an EOF before any finish reason is a stream cut short.
    onEnd() {
      if (!finished) throw new GatewayError(502, `The ${provider} stream ended before the answer was finished.`, { code: 'provider_stream_error', provider });
    },
    onEvent(event, emitter) {
      const chunk = JSON.parse(event.data) as GenerateContentResponse & Partial<GoogleErrorBody>;
      if (chunk.error) {
        emitter.error(fromGoogleError(provider, 0, chunk as GoogleErrorBody));
        return;
      }
      emitter.identify(chunk.responseId && `chatcmpl-${chunk.responseId}`, chunk.modelVersion);
      const usage = toUsage(chunk.usageMetadata);
      if (usage) emitter.usage(usage);
      // Only one choice is streamed (n > 1 is refused for streams).
      const candidate = chunk.candidates?.find((entry) => (entry.index ?? 0) === 0);
      for (const part of candidate?.content?.parts ?? []) {
        if (part.functionCall) {
          const index = toolCalls++;
          emitter.toolCallStart(index, newToolCallId(part.thoughtSignature), part.functionCall.name);
          emitter.toolCallArguments(index, JSON.stringify(part.functionCall.args ?? {}));
        } else if (typeof part.text === 'string') {
          if (!part.thought) emitter.text(part.text);
          else if (!options.strictApiCompliance) emitter.contentBlock({ index: 0, type: 'thinking', thinking: part.text });
        }
      }
      if (candidate?.finishReason && !finished) {
        finished = true;
        emitter.finish(mapFinishReason(candidate.finishReason, toolCalls > 0));
      } else if (!candidate && chunk.promptFeedback?.blockReason && !finished) {
        finished = true;
        emitter.finish('content_filter');
      }
    },
  });
}
