import { jwtProvidersRoute } from '../lib/control/jwt-providers-route';
import { bufferedHandler } from '../lib/http/lambda/handlers';

/** /v1/auth/jwt-providers and /v1/auth/jwt-providers/{providerId} */
export const handler = bufferedHandler(jwtProvidersRoute);
