import { rateLimitPolicyKey } from './keys';
import { workspacePolicyStore, type WorkspacePolicyItem } from './workspace-policies';

export type { PolicyCondition, PolicyStatus } from './workspace-policies';

export type RateLimitType = 'requests' | 'tokens';
export type RateLimitUnit = 'rpm' | 'rph' | 'rpd';

/** A rate-limit policy as stored. */
export interface RateLimitPolicyItem extends WorkspacePolicyItem {
  name?: string;
  type: RateLimitType;
  unit: RateLimitUnit;
  value: number;
}

export const rateLimitPolicyStore = workspacePolicyStore<RateLimitPolicyItem>(rateLimitPolicyKey);
