import { usageLimitPolicyKey } from './keys';
import { workspacePolicyStore, type WorkspacePolicyItem } from './workspace-policies';

export type UsageLimitType = 'cost' | 'tokens';
export type PeriodicReset = 'weekly' | 'monthly';

/** A usage-limit policy (budget) as stored; `credit_limit` is USD or tokens. */
export interface UsageLimitPolicyItem extends WorkspacePolicyItem {
  name: string;
  type: UsageLimitType;
  credit_limit: number;
  alert_threshold?: number;
  periodic_reset?: PeriodicReset;
  periodic_reset_days?: number;
}

export const usageLimitPolicyStore = workspacePolicyStore<UsageLimitPolicyItem>(usageLimitPolicyKey);
