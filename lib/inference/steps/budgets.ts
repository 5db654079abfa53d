import {
  BudgetExceededError,
  counterUnits,
  countSpend,
  enforceBudgets,
  refuseSpent,
  releaseBudgets,
  type BudgetState,
  type Estimate,
} from '../../budgets/enforce';
import { costOf, priceOf } from '../../pricing/prices';
import type { AttemptOutcome } from '../../routing/attempt-outcome';
import type { InferenceContext, RequestStep, TargetAttempt, TargetStep } from '../context';
import { estimatedTokens, modelOf, requestValues, targetValues, tokenEstimate } from '../policy-values';

/**
 * `budgets` of a request: the workspace's usage-limit policies on the key, the workspace, the
 * prompt and metadata. A token budget reserves the request's estimated tokens before routing; a
 * cost budget is reserved on per target attempt, when the provider and model that price the
 * estimate are known (a bucket known to be spent refuses here already). A refusal is a 412 and no
 * provider is called; otherwise the reservations are settled with what the request spent once its
 * answer is complete, with the request's own post-response write.
 */
export const requestBudgetStep: RequestStep = {
  name: 'budgets',
  async run(context, next) {
    const { request } = context;
    const budgets = await context.stores.policies.budgets(request.caller.workspaceId);
    if (budgets.request.length === 0 && budgets.target.length === 0) return next();
    const tokenBudgets = budgets.request.filter((budget) => budget.type === 'tokens');
    const costBudgets = budgets.request.filter((budget) => budget.type === 'cost');
    const state: BudgetState = { attemptBudgets: [...costBudgets, ...budgets.target], requestSlots: [], targetSlots: [] };
    context.budgets = state;
    try {
      refuseSpent(costBudgets, requestValues(request));
      if (tokenBudgets.length > 0)
        state.requestSlots = await enforceBudgets(context.stores.counters, tokenBudgets, requestValues(request), () => estimatedTokens(context));
    } catch (error) {
      if (error instanceof BudgetExceededError) context.recorder.budgetExceeded(error.policyId);
      throw error;
    }
    settleWhenFinished(context, state);
    return next();
  },
};

/**
 * `budgets` of a target attempt: budgets on provider, model, config or catalog slug, and the
 * request's cost budgets. A refusal is this attempt's 412, which a fallback may route around.
 */
export const targetBudgetStep: TargetStep = {
  name: 'budgets',
  async run(attempt, next) {
    const state = attempt.inference.budgets;
    if (!state || state.attemptBudgets.length === 0) return next();
    const { counters } = attempt.inference.stores;
    // The attempt before this one failed: what it reserved is no longer needed.
    if (state.targetSlots.length > 0) attempt.inference.waitUntil(releaseBudgets(counters, state.targetSlots.splice(0)).catch(reportCountError));
    try {
      state.targetSlots = await enforceBudgets(counters, state.attemptBudgets, targetValues(attempt), attemptEstimate(attempt));
    } catch (error) {
      if (!(error instanceof BudgetExceededError)) throw error;
      attempt.inference.recorder.budgetExceeded(error.policyId);
      const refused: AttemptOutcome = { ok: false, status: 412, headers: {}, error, network: false };
      return refused;
    }
    return next();
  },
};

/** What an attempt may spend: estimated tokens, and for a cost budget their price at this target's model (0 when it has none: a cost budget counts such a model as 0). */
function attemptEstimate(attempt: TargetAttempt): Estimate {
  const overrides = attempt.leaf.settings.override_params;
  const tokens = tokenEstimate(attempt.inference, overrides);
  return (budget) => {
    if (budget.type === 'tokens') return tokens.prompt + tokens.completion;
    const usage = { prompt_tokens: tokens.prompt, completion_tokens: tokens.completion, total_tokens: tokens.prompt + tokens.completion };
    return counterUnits('cost', costOf(priceOf(attempt.target?.provider.name, modelOf(attempt)), usage) ?? 0);
  };
}

/**
 * Settles the reservations once the request's log record is complete: with its tokens, and its
 * cost from the pricing table. A cache hit, a failure, or a cut stream without usage spends
 * nothing, so its reservations are released whole. The write starts when the request finishes and
 * is handed to `waitUntil` then: no deferred work waits on the finish, so no caller's order can hang it.
 */
function settleWhenFinished(context: InferenceContext, state: BudgetState): void {
  context.recorder.onFinish((record) => {
    const spend = { tokens: (record.usage?.total_tokens ?? 0) + (record.cache_embedding_usage?.total_tokens ?? 0), cost: record.cost };
    context.waitUntil(countSpend(context.stores.counters, [...state.requestSlots, ...state.targetSlots], spend).catch(reportCountError));
  });
}

function reportCountError(error: unknown): void {
  console.error('Usage could not be counted against budgets', error);
}
