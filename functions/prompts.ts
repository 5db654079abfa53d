import { promptsRoute } from '../lib/control/prompts-route';
import { bufferedHandler } from '../lib/http/lambda/handlers';

/** /v1/prompts and /v1/prompts/partials: prompt templates, their versions, and render */
export const handler = bufferedHandler(promptsRoute);
