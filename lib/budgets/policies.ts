/**
 * Usage-limit policies (budgets): a workspace's caps on what the requests its conditions select
 * may spend, in USD or tokens, per period, counted per bucket of its `group_by` values. Conditions
 * and groups are the rate-limit policies' keys, matched by the same code.
 */
import { activePolicyCache } from '../ratelimit/policies';
import type { PolicyCondition } from '../store/workspace-policies';
import { usageLimitPolicyStore, type UsageLimitPolicyItem } from '../store/usage-limit-policies';

export type { UsageLimitPolicyItem as UsageLimitPolicy, UsageLimitType, PeriodicReset } from '../store/usage-limit-policies';

export const { create: createBudget, find: findBudget, list: listBudgets, change: changeBudget } = usageLimitPolicyStore;

export type BudgetChange = Partial<Pick<UsageLimitPolicyItem, 'name' | 'credit_limit' | 'alert_threshold' | 'conditions' | 'group_by' | 'status'>>;

/** A budget as the hot path reads it. */
export interface ActiveBudget {
  id: string;
  workspaceId: string;
  type: UsageLimitPolicyItem['type'];
  creditLimit: number;
  alertThreshold?: number;
  conditions: PolicyCondition[];
  groupKeys: string[];
  reset: Pick<UsageLimitPolicyItem, 'periodic_reset' | 'periodic_reset_days' | 'created_at'>;
}

export function toActiveBudget(item: UsageLimitPolicyItem, groupKeys: string[]): ActiveBudget {
  return {
    id: item.id,
    workspaceId: item.workspace_id,
    type: item.type,
    creditLimit: item.credit_limit,
    alertThreshold: item.alert_threshold,
    conditions: item.conditions,
    groupKeys,
    reset: { periodic_reset: item.periodic_reset, periodic_reset_days: item.periodic_reset_days, created_at: item.created_at },
  };
}

/**
 * The workspace's active budgets, from memory for at most the policies' cache TTL. Those known
 * before routing are checked once per request; those on a target key per attempt.
 */
export const activeBudgets = activePolicyCache(usageLimitPolicyStore, toActiveBudget);
