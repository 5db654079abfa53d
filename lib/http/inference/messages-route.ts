/**
 * `/v1/messages` and `/v1/messages/count_tokens`: Anthropic's Messages API over the inference core,
 * for Anthropic's own clients. A message is one `messages` inference request, run by `runInference`
 * like any other (config, routing, retries, cache, guardrails, limits, budgets, logs); an anthropic
 * target gets it as it is, any other provider translated to chat and back (see prepare-call.ts).
 * Every error, the gateway's own included, answers in Anthropic's shape.
 */
import { badRequest, GatewayError } from '../../core/errors';
import { inferenceContext, runInference } from '../../inference/run-inference';
import { anthropicErrorBody, anthropicErrorEvent } from '../../providers/messages-format/error-body';
import type { RouteContext, RouteHandler } from '../pipeline';
import type { GatewayResponse } from '../types';
import { fromHttp } from './from-http';
import { routedResponse } from './routed-response';
import { commitStreamWhileRouting, streamCommitDelayMs } from './stream-commit';

const countTokensPath = 'messages/count_tokens';

async function createMessage(context: RouteContext): Promise<GatewayResponse> {
  const request = await fromHttp('messages', context);
  const inference = inferenceContext(request, context);
  const routing = runInference(inference);
  if (request.kind === 'unified' && request.stream) {
    const committed = await commitStreamWhileRouting(routing, inference, streamCommitDelayMs(), (error) => anthropicErrorEvent(anthropicErrorBody(error)));
    if (committed) return committed;
  }
  const result = await routing;
  const answer = routedResponse(result, context.recorder);
  if (result.outcome.ok) return answer;
  return { ...answer, headers: { ...answer.headers, 'content-type': 'application/json' }, body: JSON.stringify(anthropicErrorBody(result.outcome.error)) };
}

/**
 * Token counting is Anthropic's own endpoint, free and answered without a model run: the request
 * goes to an anthropic target as it is (pass-through, so a config's routing and keys apply). Other
 * providers have nothing that counts a Messages request, so a request that names one is refused
 * before it is sent, and one a config routed elsewhere is answered with why it failed there.
 */
async function countTokens(context: RouteContext): Promise<GatewayResponse> {
  const named = context.request.headers['x-gateway-provider']?.trim();
  if (named && named !== 'anthropic' && !context.request.headers['x-gateway-config']) throw notCountable(named);
  const request = await fromHttp('passthrough', { ...context, request: { ...context.request, pathParameters: { proxy: countTokensPath } } });
  const result = await runInference(inferenceContext(request, context));
  const answer = routedResponse(result, context.recorder);
  const provider = result.target?.provider.name;
  if (result.outcome.ok && provider === 'anthropic') return answer;
  const error = provider && provider !== 'anthropic' ? notCountable(provider) : result.outcome.ok ? undefined : result.outcome.error;
  if (!error) return answer;
  return {
    ...answer,
    status: error.status,
    headers: { ...answer.headers, 'content-type': 'application/json' },
    body: JSON.stringify(anthropicErrorBody(error)),
  };
}

function notCountable(provider: string): GatewayError {
  return new GatewayError(
    404,
    `/v1/messages/count_tokens is answered by Anthropic's own token counter, and ${provider} has none; send it to an anthropic target (x-gateway-provider: anthropic, or a config whose target is anthropic).`,
    { code: 'count_tokens_unsupported' },
  );
}

/**
 * Anthropic's clients send their key as `x-api-key` (or as a bearer token, which the gateway reads
 * on every route); either way it is the provider key, read as the bearer token is.
 */
function withProviderKey(context: RouteContext): RouteContext {
  const { headers } = context.request;
  const key = headers['x-api-key']?.trim();
  if (!key) return context;
  const { 'x-api-key': _key, ...rest } = headers;
  const provider = rest.authorization ? rest : { ...rest, authorization: `Bearer ${key}` };
  return { ...context, request: { ...context.request, headers: provider } };
}

async function messages(context: RouteContext): Promise<GatewayResponse> {
  const { method, resource } = context.request;
  if (method !== 'POST') throw new GatewayError(405, `${resource} takes POST, not ${method}.`, { code: 'method_not_allowed', headers: { allow: 'POST' } });
  // A request refused before it is routed (a body that is not valid) is still an inference request analytics counts.
  context.recorder.countedAsInference();
  const routed = withProviderKey(context);
  if (resource === '/v1/messages') return createMessage(routed);
  if (resource === '/v1/messages/count_tokens') return countTokens(routed);
  throw badRequest(`${resource} is not a Messages API route.`, null, 'unknown_route');
}

export const messagesRoute: RouteHandler = Object.assign(messages, { errorBody: anthropicErrorBody });
