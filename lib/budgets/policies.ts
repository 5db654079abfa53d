/**
 * Usage-limit policies (budgets): a workspace's caps on what the requests its conditions select
 * may spend, in USD or tokens, per period, counted per bucket of its `group_by` values. Conditions
 * and groups are the rate-limit policies' keys, matched by the same code.
 */
import { randomUUID } from 'node:crypto';
import { isTargetKey } from '../ratelimit/policies';
import { LoadingCache } from '../store/loading-cache';
import type { PolicyCondition } from '../store/rate-limit-policies';
import { getUsageLimitPolicyItem, listUsageLimitPolicyItems, putUsageLimitPolicyItem, type UsageLimitPolicyItem } from '../store/usage-limit-policies';

export type { UsageLimitPolicyItem as UsageLimitPolicy, UsageLimitType, PeriodicReset } from '../store/usage-limit-policies';

export type BudgetFields = Pick<UsageLimitPolicyItem, 'name' | 'type' | 'credit_limit' | 'alert_threshold' | 'periodic_reset' | 'periodic_reset_days' | 'conditions' | 'group_by'>;

export async function createBudget(owner: { workspaceId: string; organisationId: string }, fields: BudgetFields, now = Date.now()): Promise<UsageLimitPolicyItem> {
  const policy: UsageLimitPolicyItem = { id: randomUUID(), workspace_id: owner.workspaceId, organisation_id: owner.organisationId, status: 'active', ...fields, created_at: now, last_updated_at: now };
  if (!(await putUsageLimitPolicyItem(policy, 'ifAbsent'))) throw new Error(`Budget id ${policy.id} is taken; ids are random, so this should not happen.`);
  return policy;
}

export const findBudget = (workspaceId: string, id: string) => getUsageLimitPolicyItem(workspaceId, id);

export const listBudgets = (workspaceId: string) => listUsageLimitPolicyItems(workspaceId);

export type BudgetChange = Partial<Pick<UsageLimitPolicyItem, 'name' | 'credit_limit' | 'alert_threshold' | 'conditions' | 'group_by' | 'status'>>;

/** Applies a change to a stored budget; undefined when the workspace has none of that id. */
export async function changeBudget(workspaceId: string, id: string, change: BudgetChange, check?: (changed: UsageLimitPolicyItem) => void): Promise<UsageLimitPolicyItem | undefined> {
  const current = await getUsageLimitPolicyItem(workspaceId, id);
  if (!current) return undefined;
  const defined = Object.fromEntries(Object.entries(change).filter(([, field]) => field !== undefined));
  const changed: UsageLimitPolicyItem = { ...current, ...defined, last_updated_at: Date.now() };
  check?.(changed);
  return (await putUsageLimitPolicyItem(changed, 'ifPresent')) ? changed : undefined;
}

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

export interface WorkspaceBudgets {
  /** Budgets whose conditions and groups are known before routing: checked once per request. */
  request: ActiveBudget[];
  /** Budgets on provider, model, config or virtual_key: checked per target attempt. */
  target: ActiveBudget[];
}

const none: WorkspaceBudgets = Object.freeze({ request: [], target: [] }) as WorkspaceBudgets;

/** Hot-path reads live this long: a new, changed or archived budget applies everywhere within it. */
export const budgetCacheTtlMs = 5_000;
const active = new LoadingCache<WorkspaceBudgets>({ maxEntries: 10_000, missingTtlMs: budgetCacheTtlMs });

export function activeBudgets(workspaceId: string): Promise<WorkspaceBudgets> {
  return active
    .get(workspaceId, budgetCacheTtlMs, async () => {
      const items = (await listUsageLimitPolicyItems(workspaceId)).filter((item) => item.status === 'active');
      if (items.length === 0) return none;
      const budgets: WorkspaceBudgets = { request: [], target: [] };
      for (const item of items) {
        const groupKeys = item.group_by.map((group) => group.key);
        const perTarget = groupKeys.some(isTargetKey) || item.conditions.some((condition) => isTargetKey(condition.key));
        (perTarget ? budgets.target : budgets.request).push({
          id: item.id,
          workspaceId: item.workspace_id,
          type: item.type,
          creditLimit: item.credit_limit,
          alertThreshold: item.alert_threshold,
          conditions: item.conditions,
          groupKeys,
          reset: { periodic_reset: item.periodic_reset, periodic_reset_days: item.periodic_reset_days, created_at: item.created_at },
        });
      }
      return budgets;
    })
    .then((found) => found ?? none);
}

export function forgetActiveBudgets(): void {
  active.clear();
}
