import type { ProviderDefinition } from '../types';
import { anthropicAdapter } from './adapter';

/** Anthropic's Messages API (`x-api-key` auth): chat translated to it, and Messages requests as they are. */
export const anthropicProvider: ProviderDefinition = {
  name: 'anthropic',
  baseUrl: 'https://api.anthropic.com/v1',
  operations: ['chat', 'messages'],
  adapter: anthropicAdapter,
};

// The Messages mapping, for other hosts of Claude (Google Vertex AI's rawPredict/streamRawPredict).
export type { MessagesBody, MessageResponse, StreamEvent } from './api';
export { readAnthropicError, streamEventError } from './errors';
export { mapStopReason } from './finish-reason';
export { defaultMaxTokens, toMessagesRequest, type AnthropicMapping, type MessagesRequest } from './request';
export { fromMessageResponse, readMessageResponse } from './response';
export { anthropicEventMapper, anthropicStreamTransform, parseSseEvent, streamEnd, type AnthropicStreamOptions, type StreamEnd } from './stream';
export { mapUsage } from './usage';
