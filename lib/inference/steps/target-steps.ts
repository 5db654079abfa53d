import type { InferenceRequest } from '../inference-request';
import type { TargetStep } from '../context';
import { targetBudgetStep } from './budgets';
import { cacheStep } from './cache';
import { targetHooksStep } from './hooks';
import { passthroughCallStep } from './passthrough-call';
import { providerCallStep } from './provider-call';
import { targetRateLimitStep } from './rate-limits';
import { resolveTargetStep } from './resolve-target';
import { timeoutStep } from './timeout';

/**
 * What every attempt at a target goes through, in order, per kind of request. Steps scoped to one
 * target (a cache lookup, provider-scoped limits) join these lists before `timeout`.
 */
export const targetSteps: Record<InferenceRequest['kind'], readonly TargetStep[]> = {
  unified: [resolveTargetStep, targetRateLimitStep, targetBudgetStep, targetHooksStep, cacheStep, timeoutStep, providerCallStep],
  passthrough: [resolveTargetStep, targetRateLimitStep, targetBudgetStep, timeoutStep, passthroughCallStep],
};
