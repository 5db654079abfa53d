import type { RouteContext } from '../pipeline';
import type { GatewayResponse } from '../types';
import { fromHttp } from './from-http';
import { routedResponse } from './routed-response';
import { inferenceContext, runInference } from '../../inference/run-inference';

/**
 * `/v1/{path}` for any path without a route of its own: forwarded to `{provider base URL}/{path}`
 * with the query string; the provider's status, headers and body bytes come back as they are,
 * streamed as they arrive. With a config, its strategy, retries and breakers apply as on the
 * unified routes (a non-2xx answer counts as a failure).
 */
export async function passthroughRoute(context: RouteContext): Promise<GatewayResponse> {
  const request = fromHttp('passthrough', context);
  const result = await runInference(inferenceContext(request, context));
  return routedResponse(result, context.recorder);
}
