/**
 * Rate-limit policies: a workspace's limits on requests or tokens per minute, hour or day, for the
 * requests its conditions select, counted per bucket of its `group_by` values.
 */
import { randomUUID } from 'node:crypto';
import { LoadingCache } from '../store/loading-cache';
import { getRateLimitPolicyItem, listRateLimitPolicyItems, putRateLimitPolicyItem, type PolicyCondition, type RateLimitPolicyItem } from '../store/rate-limit-policies';

export type { PolicyCondition, PolicyStatus, RateLimitPolicyItem as RateLimitPolicy, RateLimitType, RateLimitUnit } from '../store/rate-limit-policies';

/** Keys known before routing: checked once per request. */
export const requestKeys = ['api_key', 'workspace_id', 'prompt'] as const;
/** Keys of one target attempt (after `override_params`): checked per attempt. */
export const targetKeys = ['provider', 'model', 'config', 'virtual_key'] as const;
export const metadataPrefix = 'metadata.';

export function isPolicyKey(key: string): boolean {
  return (requestKeys as readonly string[]).includes(key) || (targetKeys as readonly string[]).includes(key) || (key.startsWith(metadataPrefix) && key.length > metadataPrefix.length && key.length <= 64 + metadataPrefix.length);
}

export function isTargetKey(key: string): boolean {
  return (targetKeys as readonly string[]).includes(key);
}

export const windowMs = { rpm: 60_000, rph: 3_600_000, rpd: 86_400_000 } as const;

export type PolicyFields = Pick<RateLimitPolicyItem, 'type' | 'unit' | 'value' | 'name' | 'conditions' | 'group_by'>;

export async function createPolicy(owner: { workspaceId: string; organisationId: string }, fields: PolicyFields): Promise<RateLimitPolicyItem> {
  const now = Date.now();
  const policy: RateLimitPolicyItem = { id: randomUUID(), workspace_id: owner.workspaceId, organisation_id: owner.organisationId, status: 'active', ...fields, created_at: now, last_updated_at: now };
  if (!(await putRateLimitPolicyItem(policy, 'ifAbsent'))) throw new Error(`Policy id ${policy.id} is taken; ids are random, so this should not happen.`);
  return policy;
}

export const findPolicy = (workspaceId: string, id: string) => getRateLimitPolicyItem(workspaceId, id);

export const listPolicies = (workspaceId: string) => listRateLimitPolicyItems(workspaceId);

/** Applies a change to a stored policy; undefined when the workspace has none of that id. */
export async function changePolicy(workspaceId: string, id: string, change: Partial<Pick<RateLimitPolicyItem, 'value' | 'name' | 'conditions' | 'group_by' | 'status'>>): Promise<RateLimitPolicyItem | undefined> {
  const current = await getRateLimitPolicyItem(workspaceId, id);
  if (!current) return undefined;
  const changed: RateLimitPolicyItem = { ...current, ...definedOnly(change), last_updated_at: Date.now() };
  return (await putRateLimitPolicyItem(changed, 'ifPresent')) ? changed : undefined;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
}

/** A policy as the hot path reads it: conditions and groups split by when they can be known. */
export interface ActivePolicy {
  id: string;
  type: RateLimitPolicyItem['type'];
  unit: RateLimitPolicyItem['unit'];
  value: number;
  conditions: PolicyCondition[];
  groupKeys: string[];
  /** Limits a target attempt (a condition or group names a target key), not the request. */
  perTarget: boolean;
}

export interface WorkspacePolicies {
  request: ActivePolicy[];
  target: ActivePolicy[];
}

const none: WorkspacePolicies = Object.freeze({ request: [], target: [] }) as WorkspacePolicies;

/** Hot-path reads live this long: a new, changed or archived policy applies everywhere within it. */
export const policyCacheTtlMs = 5_000;
const active = new LoadingCache<WorkspacePolicies>({ maxEntries: 10_000, missingTtlMs: policyCacheTtlMs });

/** The workspace's active policies, from memory for at most `policyCacheTtlMs`; one Query on a miss. */
export function activePolicies(workspaceId: string): Promise<WorkspacePolicies> {
  return active.get(workspaceId, policyCacheTtlMs, async () => {
    const items = (await listRateLimitPolicyItems(workspaceId)).filter((item) => item.status === 'active');
    if (items.length === 0) return none;
    const policies: WorkspacePolicies = { request: [], target: [] };
    for (const item of items) {
      const groupKeys = item.group_by.map((group) => group.key);
      const perTarget = groupKeys.some(isTargetKey) || item.conditions.some((condition) => isTargetKey(condition.key));
      (perTarget ? policies.target : policies.request).push({ id: item.id, type: item.type, unit: item.unit, value: item.value, conditions: item.conditions, groupKeys, perTarget });
    }
    return policies;
  }).then((found) => found ?? none);
}

/** Drops what the hot path remembers (tests). */
export function forgetActivePolicies(): void {
  active.clear();
}
