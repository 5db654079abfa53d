import { batchesRoute } from '../lib/batches/batches-route';
import { streamingHandler } from '../lib/http/lambda/handlers';

/** /v1/batches…: the gateway's managed batches, or a provider's batch API passed through (streamed, as every pass-through). */
export const handler = streamingHandler(batchesRoute);
