import { BudgetExceededError, countSpend, enforceBudgets, type BudgetSlot } from '../../budgets/enforce';
import { activeBudgets, type ActiveBudget } from '../../budgets/policies';
import type { AttemptOutcome } from '../../routing/attempt-outcome';
import type { InferenceContext, RequestStep, TargetStep } from '../run-inference';
import { requestValues, targetValues } from './rate-limits';

interface BudgetState {
  targetBudgets: readonly ActiveBudget[];
  requestSlots: BudgetSlot[];
  /** The last target attempt's buckets: the attempt whose answer the client gets. */
  targetSlots: BudgetSlot[];
}

const states = new WeakMap<InferenceContext, BudgetState>();

/**
 * `budgets` of a request: the workspace's usage-limit policies on the key, the workspace, the
 * prompt and metadata, checked before routing. A spent bucket refuses the request with 412 and no
 * provider is called; otherwise the request's spend is added once its answer is complete, with
 * the request's own post-response write.
 */
export const requestBudgetStep: RequestStep = {
  name: 'budgets',
  async run(context, next) {
    const { request } = context;
    const budgets = await activeBudgets(request.caller.workspaceId);
    if (budgets.request.length === 0 && budgets.target.length === 0) return next();
    const state: BudgetState = { targetBudgets: budgets.target, requestSlots: [], targetSlots: [] };
    states.set(context, state);
    if (budgets.request.length > 0) {
      try {
        state.requestSlots = await enforceBudgets(budgets.request, requestValues(request));
      } catch (error) {
        if (error instanceof BudgetExceededError) context.recorder.budgetExceeded(error.policyId);
        throw error;
      }
    }
    if (state.requestSlots.length > 0 || budgets.target.length > 0) context.waitUntil(countWhenFinished(context, state));
    return next();
  },
};

/** `budgets` of a target attempt: budgets on provider, model, config or catalog slug. A refusal is this attempt's 412, which a fallback may route around. */
export const targetBudgetStep: TargetStep = {
  name: 'budgets',
  async run(attempt, next) {
    const state = states.get(attempt.inference);
    if (!state || state.targetBudgets.length === 0) return next();
    try {
      state.targetSlots = await enforceBudgets(state.targetBudgets, targetValues(attempt));
    } catch (error) {
      if (!(error instanceof BudgetExceededError)) throw error;
      state.targetSlots = [];
      attempt.inference.recorder.budgetExceeded(error.policyId);
      const refused: AttemptOutcome = { ok: false, status: 412, headers: {}, error, network: false };
      return refused;
    }
    return next();
  },
};

/** Adds the request's spend once its log record is complete: its tokens, and its cost from the pricing table (a cache hit spends neither). */
function countWhenFinished(context: InferenceContext, state: BudgetState): Promise<unknown> {
  return new Promise<{ tokens: number; cost: number | null }>((resolve) =>
    context.recorder.onFinish((record) => resolve({ tokens: (record.usage?.total_tokens ?? 0) + (record.cache_embedding_usage?.total_tokens ?? 0), cost: record.cost })),
  )
    .then((spend) => countSpend([...state.requestSlots, ...state.targetSlots], spend))
    .catch((error: unknown) => console.error('Usage could not be counted against budgets', error));
}
