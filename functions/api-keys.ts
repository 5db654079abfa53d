import { apiKeysRoute } from '../lib/control/api-keys-route';
import { bufferedHandler } from '../lib/http/lambda/handlers';

/** GET, POST /v1/api-keys and DELETE /v1/api-keys/{keyId} */
export const handler = bufferedHandler(apiKeysRoute);
