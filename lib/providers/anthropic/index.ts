export { anthropicProvider } from './provider';

// The Messages mapping, for other hosts of Claude (Google Vertex AI's rawPredict/streamRawPredict).
export type { MessagesBody, MessageResponse, StreamEvent } from './api';
export { readAnthropicError, streamEventError } from './errors';
export { mapStopReason } from './finish-reason';
export { defaultMaxTokens, toMessagesRequest, type AnthropicMapping, type MessagesRequest } from './request';
export { fromMessageResponse, readMessageResponse } from './response';
export { anthropicEventMapper, anthropicStreamTransform, parseSseEvent, streamEnd, type AnthropicStreamOptions, type StreamEnd } from './stream';
export { mapUsage } from './usage';
