import { readJsonObject } from '../http/json-body';
import type { RouteContext, RouteHandler } from '../http/pipeline';
import type { GatewayResponse } from '../http/types';
import type { Operation, ProviderCall } from '../providers/types';
import { runStrategy } from '../routing/engine';
import { attemptProvider } from './provider-attempt';
import { resolveRequestPlan } from './request-config';
import { defaultRequestTimeoutMs, forwardedHeaders, readForwardHeaderNames, readRequestTimeoutHeader } from './request-options';
import { routedResponse } from './routed-response';
import { commitStreamWhileRouting, streamCommitDelayMs } from './stream-commit';
import { readHeaderCredentials, targetResolver } from './target';
import { validateInferenceBody } from './validate';

/**
 * A unified inference route (`/v1/chat/completions`, `/v1/completions`, `/v1/embeddings`): the
 * OpenAI-format request follows the request's config (or its provider headers) to a provider, and
 * the answer comes back in OpenAI's format, streamed event by event when the client asked for it.
 */
export function unifiedRoute(operation: Operation): RouteHandler {
  return async function unifiedInference(context: RouteContext): Promise<GatewayResponse> {
    const { request, auth, trace, log } = context;
    const body = readJsonObject(request);
    validateInferenceBody(operation, body);
    const stream = body.stream === true;
    log.stream = stream;
    log.model = body.model as string;

    const plan = await resolveRequestPlan(request.headers, auth.workspaceId);
    const targetOf = targetResolver(readHeaderCredentials(request.headers), auth.workspaceId, plan.fromConfig);
    const timeoutHeader = readRequestTimeoutHeader(request.headers);
    const forwardNames = readForwardHeaderNames(request.headers);

    const routing = runStrategy(plan.root, {
      identity: plan.identity,
      query: { metadata: trace.metadata ?? {}, params: body, url: { pathname: request.path } },
      waitUntil: context.waitUntil,
      async attempt(leaf) {
        const target = await targetOf(leaf);
        const overrides = leaf.settings.override_params;
        const call: ProviderCall = {
          operation,
          body: overrides ? { ...body, ...overrides } : body,
          clientBytes: overrides ? undefined : request.body,
          stream,
          target,
          forwardHeaders: forwardedHeaders(request.headers, leaf.settings.forward_headers ? [...leaf.settings.forward_headers, ...forwardNames] : forwardNames),
          requestHeaders: request.headers,
          strictApiCompliance: leaf.settings.strict_api_compliance ?? true,
        };
        log.provider = target.provider.name;
        log.model = call.body.model as string;
        return attemptProvider(call, {
          timeoutMs: timeoutHeader ?? leaf.settings.request_timeout ?? defaultRequestTimeoutMs,
          onUsage: (usage) => (log.usage = usage),
          onStreamError: (error) => (log.error = { message: error.message, code: error.code ?? 'provider_stream_error' }),
        });
      },
    });

    if (stream) {
      const committed = await commitStreamWhileRouting(routing, streamCommitDelayMs(), log);
      if (committed) return committed;
    }
    return routedResponse(await routing, log);
  };
}
