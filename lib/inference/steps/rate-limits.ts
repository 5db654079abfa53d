import { parseConfigRef } from '../../config/saved-configs';
import type { AttemptOutcome } from '../../routing/attempt-outcome';
import { answerHeaders, countTokens, enforce, metadataValue, newRateLimitState, RateLimitedError, releaseTokens, type RateLimitState, type ValueOf } from '../../ratelimit/enforce';
import { estimateTokens } from '../../ratelimit/estimate';
import { activePolicies, metadataPrefix } from '../../ratelimit/policies';
import type { InferenceRequest } from '../inference-request';
import type { InferenceContext, RequestStep, TargetAttempt, TargetStep } from '../run-inference';

/** What the request step found, for the target attempts of the same request. */
const states = new WeakMap<InferenceContext, RateLimitState>();

/**
 * `rate-limits` of a request: the workspace's policies on the key, the workspace, the prompt and
 * metadata, checked before routing (a refusal is a 429 and no provider is called). The answer
 * carries the `x-ratelimit-*` headers of the tightest policy of each type; token policies reserve
 * the request's estimated tokens before it is served and settle them with the answer's tokens once
 * it is complete, with the request's own post-response write.
 */
export const requestRateLimitStep: RequestStep = {
  name: 'rate-limits',
  async run(context, next) {
    const { request } = context;
    const policies = await activePolicies(request.caller.workspaceId);
    if (policies.request.length === 0 && policies.target.length === 0) return next();
    const state = newRateLimitState(policies.target);
    states.set(context, state);
    if (policies.request.length > 0) {
      try {
        state.requestTokens = await enforce(policies.request, requestValues(request), state, estimatedTokens(context));
      } catch (error) {
        if (error instanceof RateLimitedError) context.recorder.rateLimited(error.policyId);
        throw error;
      }
    }
    if (state.requestTokens.length > 0 || policies.target.some((policy) => policy.type === 'tokens')) settleWhenFinished(context, state);
    const result = await next();
    const headers = answerHeaders(state);
    const { outcome } = result;
    // A target's own refusal already carries the headers of the policy that refused it.
    if (!headers || (!outcome.ok && outcome.error instanceof RateLimitedError)) return result;
    return { ...result, outcome: { ...outcome, headers: { ...outcome.headers, ...headers } } };
  },
};

/**
 * `rate-limits` of a target attempt: policies on the provider, model (after `override_params`),
 * config or catalog slug. Runs before the cache, so a hit counts as a request (never as tokens). A
 * refusal is this attempt's 429, which a fallback may route around.
 */
export const targetRateLimitStep: TargetStep = {
  name: 'rate-limits',
  async run(attempt, next) {
    const state = states.get(attempt.inference);
    if (!state || state.targetPolicies.length === 0) return next();
    // The attempt before this one failed: what it reserved is no longer needed.
    if (state.targetTokens.length > 0) attempt.inference.waitUntil(releaseTokens(state.targetTokens.splice(0)).catch(reportCountError));
    try {
      state.targetTokens = await enforce(state.targetPolicies, targetValues(attempt), state, estimatedTokens(attempt.inference, attempt.leaf.settings.override_params));
    } catch (error) {
      if (!(error instanceof RateLimitedError)) throw error;
      attempt.inference.recorder.rateLimited(error.policyId);
      const refused: AttemptOutcome = { ok: false, status: 429, headers: { ...error.headers }, error, network: false };
      return refused;
    }
    return next();
  },
};

export function requestValues(request: InferenceRequest): ValueOf {
  return (key) => {
    if (key.startsWith(metadataPrefix)) return metadataValue(request.metadata, key);
    if (key === 'api_key') return request.caller.keyId;
    if (key === 'workspace_id') return request.caller.workspaceId;
    if (key === 'prompt') return request.promptId;
    return undefined;
  };
}

export function targetValues(attempt: TargetAttempt): ValueOf {
  const { request } = attempt.inference;
  const ofRequest = requestValues(request);
  return (key) => {
    switch (key) {
      case 'provider':
        return attempt.target?.provider.name;
      case 'model':
        return modelOf(attempt);
      case 'config':
        return request.options.config.kind === 'saved' ? parseConfigRef(request.options.config.ref)?.id : undefined;
      case 'virtual_key':
        return catalogSlugOf(attempt);
      default:
        return ofRequest(key);
    }
  };
}

/**
 * What the request may spend in tokens: its body's estimated prompt, plus its completion cap (the
 * target's `override_params` win) or the default (ratelimit/estimate.ts).
 */
export function estimatedTokens(context: InferenceContext, overrides?: Record<string, unknown>): number {
  const estimate = tokenEstimate(context, overrides);
  return estimate.prompt + estimate.completion;
}

export function tokenEstimate(context: InferenceContext, overrides?: Record<string, unknown>) {
  const { request } = context;
  if (request.kind === 'passthrough') return estimateTokens({ bytes: request.bytes?.length ?? 0 });
  const body = context.inputBody ?? request.body;
  const bytes = context.inputBody || !request.clientBytes ? JSON.stringify(body).length : request.clientBytes.length;
  return estimateTokens({ bytes, body, embeddings: request.operation === 'embeddings', overrides });
}

/** The model this target is asked for: the target's `override_params` win over the body. */
export function modelOf(attempt: TargetAttempt): string | undefined {
  const overridden = attempt.leaf.settings.override_params?.model;
  if (typeof overridden === 'string') return overridden;
  const { inference } = attempt;
  if (inference.request.kind !== 'unified') return undefined;
  const model = (inference.inputBody ?? inference.request.body).model;
  return typeof model === 'string' ? model : undefined;
}

/** The catalog integration the target names (`@slug`, `virtual_key`, or the header), as target resolution reads it. */
function catalogSlugOf(attempt: TargetAttempt): string | undefined {
  const config = attempt.leaf.config;
  const headers = attempt.inference.request.options.credentials;
  const providerRef = config.provider ?? headers.provider;
  if (providerRef?.startsWith('@')) return providerRef.slice(1);
  return config.virtual_key ?? (config.provider ? undefined : headers.virtualKey);
}

/**
 * Settles the reservations with the answer's total tokens once its body is complete (a stream's
 * usage arrives at its end); a cache hit, a failure or a cut stream without usage spends none, so
 * its reservations are released whole. The write starts when the request finishes and is handed
 * to `waitUntil` then: no deferred work waits on the finish, so no caller's order can hang it.
 */
function settleWhenFinished(context: InferenceContext, state: RateLimitState): void {
  context.recorder.onFinish((record) => context.waitUntil(countTokens([...state.requestTokens, ...state.targetTokens], record.usage?.total_tokens ?? 0).catch(reportCountError)));
}

function reportCountError(error: unknown): void {
  console.error('Token usage could not be counted against rate limits', error);
}
