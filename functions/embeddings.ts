import { streamingHandler } from '../lib/http/lambda/handlers';
import { unifiedRoute } from '../lib/http/inference/unified-route';

/** POST /v1/embeddings */
export const handler = streamingHandler(unifiedRoute('embeddings'));
