import type { RouteContext, RouteHandler } from '../pipeline';
import type { GatewayResponse } from '../types';
import type { Operation } from '../../providers/types';
import { fromHttp } from './from-http';
import { routedResponse } from './routed-response';
import { inferenceContext, runInference } from '../../inference/run-inference';
import { commitStreamWhileRouting, streamCommitDelayMs } from './stream-commit';

/**
 * A unified inference route (`/v1/chat/completions`, `/v1/completions`, `/v1/embeddings`): the
 * OpenAI-format request follows the request's config (or its provider headers) to a provider, and
 * the answer comes back in OpenAI's format, streamed event by event when the client asked for it.
 */
export function unifiedRoute(operation: Operation): RouteHandler {
  return async function unifiedInference(context: RouteContext): Promise<GatewayResponse> {
    // A request refused before it is routed (a body that is not valid) is still an inference request analytics counts.
    context.recorder.countedAsInference();
    const request = await fromHttp(operation, context);
    const inference = inferenceContext(request, context);
    const routing = runInference(inference);
    if (request.kind === 'unified' && request.stream) {
      const committed = await commitStreamWhileRouting(routing, inference, streamCommitDelayMs());
      if (committed) return committed;
    }
    return routedResponse(await routing, context.recorder);
  };
}
