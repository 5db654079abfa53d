import { streamingHandler } from '../lib/http/lambda/handlers';
import { messagesRoute } from '../lib/http/inference/messages-route';

/** /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API over the inference core. */
export const handler = streamingHandler(messagesRoute);
