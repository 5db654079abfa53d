import type { AuthContext } from '../auth/authenticate';
import type { TokenScope } from '../auth/jwt-auth';
import { GatewayError } from '../core/errors';
import type { GatewayRequest } from './types';

/**
 * What a JWT needs for a request, derived from the route API Gateway matched (its resource) and the
 * method, so no route has to say it and a new route is covered the day it is declared:
 *
 * - `completions`: the inference resources below (any provider call, pass-through included);
 * - `read`: a GET whose resource ends in a path parameter (`/v1/configs/{configId}`), or reads one
 *   resource's content (`/v1/files/{fileId}/content`);
 * - `list`: any other GET (`/v1/configs`, `/v1/prompts/{promptId}/versions`);
 * - anything else changes state, and needs a token that carries a role (`member` or `admin`).
 *
 * A token with a role passes here whatever its scopes (the role grants what the same key role
 * does, `read`, `list` and `completions` included), and the route then checks the role as it does
 * for keys. A token without a role gets only what its scopes name, as a member would.
 */
const inferenceResources = new Set([
  'POST /v1/chat/completions',
  'POST /v1/completions',
  'POST /v1/embeddings',
  'POST /v1/prompts/{promptId}/completions',
  'POST /v1/responses',
]);

const readsOneResource = /(\/\{[^/]+\}|\/\{[^/]+\}\/content)$/;

/** The scope the request needs, or undefined for one that changes state. */
export function requiredScope(request: Pick<GatewayRequest, 'method' | 'resource'>): TokenScope | undefined {
  const { method, resource } = request;
  if (inferenceResources.has(`${method} ${resource}`) || resource === '/v1/{proxy+}') return 'completions';
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  return readsOneResource.test(resource) ? 'read' : 'list';
}

/** 403 unless the JWT behind `auth` may make the request (nothing to check for an API key). */
export function authorizeToken(auth: AuthContext, request: Pick<GatewayRequest, 'method' | 'resource'>): void {
  const { token } = auth;
  if (!token || token.roleGranted) return;
  const scope = requiredScope(request);
  if (scope === undefined) {
    throw new GatewayError(
      403,
      `${request.method} ${request.resource} changes state, which a token needs a role for: its roles claim must hold "member" or "admin" (scopes read, list and completions only read and call models).`,
      { code: 'jwt_role_required' },
    );
  }
  if (!token.scopes.includes(scope)) {
    const carried = token.scopes.length > 0 ? `it carries ${token.scopes.map((item) => `"${item.slice(0, 50)}"`).join(', ')}` : 'it carries none';
    throw new GatewayError(403, `The token lacks the "${scope}" scope that ${request.method} ${request.resource} needs (${carried}).`, {
      code: 'missing_scope',
      param: scope,
    });
  }
}
