import type { Transform } from 'node:stream';
import { GatewayError } from '../../core/errors';
import type { TokenUsage } from '../../core/usage';
import type { ChatChunkEmitter } from '../openai-format/chunk-emitter';
import { chatStreamTransform } from '../openai-format/provider-stream';
import type { ContentBlockDeltaEvent, ContentBlockStartEvent, MessageStopEvent, MetadataEvent } from './api';
import { providerName, streamException } from './errors';
import { eventStreamDecoder, headerText, type EventStreamItem } from './event-stream';
import { mapStopReason } from './finish-reason';
import { mapUsage } from './usage';

export interface ConverseStreamOptions {
  model: string;
  includeUsage: boolean;
  strict: boolean;
  responseTool?: string;
  onUsage(usage: TokenUsage): void;
}

/**
 * ConverseStream (binary event stream) → OpenAI chat chunks, event by event:
 * - `contentBlockDelta.text` → content; `contentBlockStart.toolUse` → a tool call with the next
 *   OpenAI index (Bedrock's block index counts text blocks too), its `toolUse.input` fragments →
 *   argument deltas; reasoning → `content_blocks` thinking deltas (strict API compliance off only);
 * - `messageStop` → the finish reason; `metadata` (after it) → usage, on the final chunk;
 * - an exception frame, a corrupt frame, or an end without `messageStop` → an error event + [DONE].
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStreamOutput.html
 */
export function converseStreamTransform(options: ConverseStreamOptions): Transform {
  const toolIndexByBlock = new Map<number, number>();
  const responseBlocks = new Set<number>();
  let stopped = false;

  const onEvent = (item: EventStreamItem, emitter: ChatChunkEmitter) => {
    if (item.kind === 'corrupt') throw streamError(`The Bedrock event stream is corrupt: ${item.message}.`);
    if (item.kind === 'end') {
      // After messageStop the answer is whole; a metadata frame cut off then costs only the usage.
      if (!stopped)
        throw streamError(`The Bedrock stream ended before messageStop${item.pendingBytes ? `, inside a frame (${item.pendingBytes} bytes left over)` : ''}.`);
      return;
    }
    const messageType = headerText(item.headers, ':message-type');
    if (messageType === 'exception') throw streamException(headerText(item.headers, ':exception-type'), item.payload);
    if (messageType === 'error') {
      const code = headerText(item.headers, ':error-code') ?? 'error';
      throw new GatewayError(502, headerText(item.headers, ':error-message') ?? `Bedrock ended the stream with ${code}.`, { code, provider: providerName });
    }
    if (messageType !== 'event') return;
    const eventType = headerText(item.headers, ':event-type');
    switch (eventType) {
      case 'contentBlockStart': {
        const event = payloadOf<ContentBlockStartEvent>(item);
        const toolUse = event.start?.toolUse;
        if (!toolUse) return;
        if (options.responseTool && toolUse.name === options.responseTool) {
          responseBlocks.add(event.contentBlockIndex);
          return;
        }
        const index = toolIndexByBlock.size;
        toolIndexByBlock.set(event.contentBlockIndex, index);
        emitter.toolCallStart(index, toolUse.toolUseId, toolUse.name);
        return;
      }
      case 'contentBlockDelta': {
        const event = payloadOf<ContentBlockDeltaEvent>(item);
        const delta = event.delta;
        if (!delta) return;
        if (typeof delta.text === 'string') emitter.text(delta.text);
        else if (delta.toolUse) {
          const fragment = delta.toolUse.input ?? '';
          if (responseBlocks.has(event.contentBlockIndex)) emitter.text(fragment);
          else {
            const index = toolIndexByBlock.get(event.contentBlockIndex);
            if (index === undefined) throw streamError(`Bedrock sent tool input for block ${event.contentBlockIndex} before its contentBlockStart.`);
            emitter.toolCallArguments(index, fragment);
          }
        } else if (delta.reasoningContent && !options.strict) {
          const { text, signature, redactedContent } = delta.reasoningContent;
          const index = event.contentBlockIndex;
          if (typeof text === 'string') emitter.contentBlock({ index, type: 'thinking', thinking: text });
          else if (typeof signature === 'string') emitter.contentBlock({ index, type: 'thinking', signature });
          else if (typeof redactedContent === 'string') emitter.contentBlock({ index, type: 'redacted_thinking', data: redactedContent });
        }
        return;
      }
      case 'messageStop': {
        stopped = true;
        let reason = mapStopReason(payloadOf<MessageStopEvent>(item).stopReason);
        if (reason === 'tool_calls' && responseBlocks.size > 0 && toolIndexByBlock.size === 0) reason = 'stop';
        emitter.finish(reason);
        return;
      }
      case 'metadata': {
        const usage = mapUsage(payloadOf<MetadataEvent>(item).usage);
        if (usage) emitter.usage(usage);
        return;
      }
      default:
        // messageStart, contentBlockStop and events added later carry nothing to forward.
        return;
    }
  };

  return chatStreamTransform({
    provider: providerName,
    model: options.model,
    includeUsage: options.includeUsage,
    decoder: eventStreamDecoder(),
    onEvent,
    onUsage: options.onUsage,
  });
}

function payloadOf<T>(item: Extract<EventStreamItem, { kind: 'message' }>): T {
  const parsed = JSON.parse(item.payload.toString('utf8'));
  if (!parsed || typeof parsed !== 'object') throw streamError(`Bedrock sent a ${headerText(item.headers, ':event-type')} event that is not a JSON object.`);
  return parsed as T;
}

function streamError(message: string): GatewayError {
  return new GatewayError(502, message, { code: 'provider_stream_error', provider: providerName });
}
