import { streamingHandler } from '../lib/http/lambda/handlers';
import { responsesRoute } from '../lib/responses/responses-route';

/** /v1/responses…: OpenAI's Responses API over the inference core, and the stored responses. */
export const handler = streamingHandler(responsesRoute);
