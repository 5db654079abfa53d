/**
 * Rate-limit policies: a workspace's limits on requests or tokens per minute, hour or day, for the
 * requests its conditions select, counted per bucket of its `group_by` values.
 */
import { LoadingCache } from '../store/loading-cache';
import { rateLimitPolicyStore, type PolicyCondition, type RateLimitPolicyItem } from '../store/rate-limit-policies';
import type { WorkspacePolicyItem, WorkspacePolicyStore } from '../store/workspace-policies';

export type { PolicyCondition, PolicyStatus, RateLimitPolicyItem as RateLimitPolicy, RateLimitType, RateLimitUnit } from '../store/rate-limit-policies';

/** Keys known before routing: checked once per request. */
export const requestKeys = ['api_key', 'workspace_id', 'prompt'] as const;
/** Keys of one target attempt (after `override_params`): checked per attempt. */
export const targetKeys = ['provider', 'model', 'config', 'virtual_key'] as const;
export const metadataPrefix = 'metadata.';

export function isPolicyKey(key: string): boolean {
  return (
    (requestKeys as readonly string[]).includes(key) ||
    (targetKeys as readonly string[]).includes(key) ||
    (key.startsWith(metadataPrefix) && key.length > metadataPrefix.length && key.length <= 64 + metadataPrefix.length)
  );
}

export function isTargetKey(key: string): boolean {
  return (targetKeys as readonly string[]).includes(key);
}

export const windowMs = { rpm: 60_000, rph: 3_600_000, rpd: 86_400_000 } as const;

export const { create: createPolicy, find: findPolicy, list: listPolicies, change: changePolicy } = rateLimitPolicyStore;

/** A workspace's active policies of one kind, as the hot path reads them. */
export interface ActiveSplit<P> {
  /** Policies whose conditions and groups are all known before routing: checked once per request. */
  request: P[];
  /** Policies that name a target key (provider, model, config, virtual_key): checked per target attempt. */
  target: P[];
}

/** Hot-path reads live this long: a new, changed or archived policy applies everywhere within it. */
export const policyCacheTtlMs = 5_000;

/**
 * A workspace's active policies of one kind (rate limits, budgets), from memory for at most
 * `policyCacheTtlMs`; one Query on a miss, and a workspace without any costs a Map lookup.
 */
export function activePolicyCache<T extends WorkspacePolicyItem, P>(store: WorkspacePolicyStore<T>, toActive: (item: T, groupKeys: string[]) => P) {
  const cache = new LoadingCache<ActiveSplit<P>>({ maxEntries: 10_000, missingTtlMs: policyCacheTtlMs });
  return (workspaceId: string): Promise<ActiveSplit<P>> =>
    cache.get(workspaceId, policyCacheTtlMs, async () => splitActive(await store.list(workspaceId), toActive)).then((found) => found ?? noPolicies<P>());
}

/** One answer for every workspace without policies: nothing to allocate on the hot path. */
const none = Object.freeze({ request: [], target: [] }) as ActiveSplit<never>;
const noPolicies = <P>() => none as ActiveSplit<P>;

/** A workspace's policies of one kind as the hot path reads them: the active ones, split by when they can be checked. */
export function splitActive<T extends WorkspacePolicyItem, P>(items: readonly T[], toActive: (item: T, groupKeys: string[]) => P): ActiveSplit<P> {
  const active = items.filter((item) => item.status === 'active');
  if (active.length === 0) return noPolicies<P>();
  const split: ActiveSplit<P> = { request: [], target: [] };
  for (const item of active) {
    const groupKeys = item.group_by.map((group) => group.key);
    const perTarget = groupKeys.some(isTargetKey) || item.conditions.some((condition) => isTargetKey(condition.key));
    (perTarget ? split.target : split.request).push(toActive(item, groupKeys));
  }
  return split;
}

/** A policy as the hot path reads it: conditions and groups split by when they can be known. */
export interface ActivePolicy {
  id: string;
  type: RateLimitPolicyItem['type'];
  unit: RateLimitPolicyItem['unit'];
  value: number;
  conditions: PolicyCondition[];
  groupKeys: string[];
}

export function toActivePolicy(item: RateLimitPolicyItem, groupKeys: string[]): ActivePolicy {
  return { id: item.id, type: item.type, unit: item.unit, value: item.value, conditions: item.conditions, groupKeys };
}

/** The workspace's active rate-limit policies. */
export const activePolicies = activePolicyCache(rateLimitPolicyStore, toActivePolicy);
