import { filesRoute } from '../lib/files/files-route';
import { streamingHandler } from '../lib/http/lambda/handlers';

/** /v1/files… and /v1/uploads…: the gateway's files and uploads, or a provider's passed through. */
export const handler = streamingHandler(filesRoute);
