import { streamingHandler } from '../lib/http/lambda/handlers';
import { promptRunRoute } from '../lib/prompts/run-route';

/** POST /v1/prompts/{promptId}/completions */
export const handler = streamingHandler(promptRunRoute);
