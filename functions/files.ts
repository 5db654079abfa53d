import { filesRoute } from '../lib/files/files-route';
import { streamingHandler } from '../lib/http/lambda/handlers';

/** /v1/files, /v1/files/{fileId} and /v1/files/{fileId}/content: the gateway's files, or a provider's passed through. */
export const handler = streamingHandler(filesRoute);
