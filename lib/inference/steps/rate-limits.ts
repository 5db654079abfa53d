import type { AttemptOutcome } from '../../routing/attempt-outcome';
import { answerHeaders, countTokens, enforce, newRateLimitState, RateLimitedError, releaseTokens, type RateLimitState } from '../../ratelimit/enforce';
import type { InferenceContext, RequestStep, TargetStep } from '../context';
import { estimatedTokens, requestValues, targetValues } from '../policy-values';

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
    const policies = await context.stores.policies.rateLimits(request.caller.workspaceId);
    if (policies.request.length === 0 && policies.target.length === 0) return next();
    const state = newRateLimitState(policies.target);
    context.rateLimits = state;
    if (policies.request.length > 0) {
      try {
        state.requestTokens = await enforce(context.stores.counters, policies.request, requestValues(request), state, estimatedTokens(context));
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
    const state = attempt.inference.rateLimits;
    if (!state || state.targetPolicies.length === 0) return next();
    const { counters } = attempt.inference.stores;
    // The attempt before this one failed: what it reserved is no longer needed.
    if (state.targetTokens.length > 0) attempt.inference.waitUntil(releaseTokens(counters, state.targetTokens.splice(0)).catch(reportCountError));
    try {
      state.targetTokens = await enforce(
        counters,
        state.targetPolicies,
        targetValues(attempt),
        state,
        estimatedTokens(attempt.inference, attempt.leaf.settings.override_params),
      );
    } catch (error) {
      if (!(error instanceof RateLimitedError)) throw error;
      attempt.inference.recorder.rateLimited(error.policyId);
      const refused: AttemptOutcome = { ok: false, status: 429, headers: { ...error.headers }, error, network: false };
      return refused;
    }
    return next();
  },
};

/**
 * Settles the reservations with the answer's total tokens once its body is complete (a stream's
 * usage arrives at its end); a cache hit, a failure or a cut stream without usage spends none, so
 * its reservations are released whole. The write starts when the request finishes and is handed
 * to `waitUntil` then: no deferred work waits on the finish, so no caller's order can hang it.
 */
function settleWhenFinished(context: InferenceContext, state: RateLimitState): void {
  context.recorder.onFinish((record) =>
    context.waitUntil(
      countTokens(context.stores.counters, [...state.requestTokens, ...state.targetTokens], record.usage?.total_tokens ?? 0).catch(reportCountError),
    ),
  );
}

function reportCountError(error: unknown): void {
  console.error('Token usage could not be counted against rate limits', error);
}
