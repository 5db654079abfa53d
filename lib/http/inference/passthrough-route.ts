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
  context.recorder.countedAsInference();
  const request = await fromHttp('passthrough', context);
  const result = await runInference(inferenceContext(request, context));
  return routedResponse(result, context.recorder);
}

/**
 * Pass-through for a request that reached a more specific route than `/v1/{proxy+}` (files,
 * batches): the provider path is the route's resource with its parameters filled in, decoded as
 * API Gateway gives them, as `/v1/{proxy+}` would have given it.
 */
export function passthroughFromResource(context: RouteContext): Promise<GatewayResponse> {
  const { request } = context;
  const proxy = request.resource.replace(/^\/v1\//, '').replace(/\{(\w+)\}/g, (_, name: string) => request.pathParameters[name] ?? '');
  return passthroughRoute({ ...context, request: { ...request, pathParameters: { proxy } } });
}
