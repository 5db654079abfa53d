/*
 * Every store of a request in memory, for tests of a step, of the core and of workers: no emulator,
 * no table, and nothing shared with another test's stores. What the stores hold is set with their
 * `save…` calls, as the control routes would write it. A saved config is found by `id` or
 * `id@version`; policies are active when saved.
 */
import { toActiveBudget, type UsageLimitPolicy } from '../budgets/policies';
import { answerCache } from '../cache/semantic-cache';
import { normaliseSlug, type ProviderCatalog, type ProviderIntegration } from '../catalog/providers';
import { parseConfigRef, type ResolvedConfig, type SavedConfigs } from '../config/saved-configs';
import type { GatewayConfig } from '../config/types';
import { deepFreeze } from '../core/deep-freeze';
import { newId } from '../core/ids';
import type { SavedGuardrailSpec } from '../guardrails/hook-specs';
import type { SavedGuardrails } from '../guardrails/saved-guardrails';
import { splitActive, toActivePolicy, type RateLimitPolicy } from '../ratelimit/policies';
import { CircuitBreakers } from '../routing/circuit-breaker';
import { memoryAnswers } from '../store/memory/answers';
import { memoryBreakerStore } from '../store/memory/breaker-state';
import { memoryCounters } from '../store/memory/counters';
import type { BreakerStateStore } from '../store/breaker-state';
import type { PolicyFields, WorkspacePolicyItem } from '../store/workspace-policies';
import type { ActivePolicies, InferenceStores } from './stores';

/** A catalog entry to add: credentials in the clear, as the hot path reads them. */
type NewIntegration = Pick<ProviderIntegration, 'slug' | 'provider'> & Partial<Omit<ProviderIntegration, 'slug' | 'provider' | 'workspace_id'>>;

/** The stores, with what a test uses to fill and read them. */
export interface MemoryStores extends InferenceStores {
  configs: SavedConfigs & { save(workspaceId: string, config: GatewayConfig, id?: string): ResolvedConfig };
  catalog: ProviderCatalog & { save(workspaceId: string, integration: NewIntegration): ProviderIntegration };
  guardrails: SavedGuardrails & { save(workspaceId: string, guardrail: Omit<SavedGuardrailSpec, 'id'>): SavedGuardrailSpec };
  policies: ActivePolicies & {
    saveRateLimit(workspaceId: string, fields: PolicyFields<RateLimitPolicy>): RateLimitPolicy;
    saveBudget(workspaceId: string, fields: PolicyFields<UsageLimitPolicy>): UsageLimitPolicy;
  };
  counters: ReturnType<typeof memoryCounters>;
  /** The cache's store itself: what it holds, and the workspaces' semantic settings. */
  answers: ReturnType<typeof memoryAnswers>;
  /** The breakers' store itself, to read what routing wrote. */
  breakerStore: BreakerStateStore;
}

export function memoryStores(): MemoryStores {
  const configs = new Map<string, ResolvedConfig[]>();
  const integrations = new Map<string, ProviderIntegration>();
  const guardrails = new Map<string, SavedGuardrailSpec>();
  const rateLimits = new Map<string, RateLimitPolicy[]>();
  const budgets = new Map<string, UsageLimitPolicy[]>();
  const answers = memoryAnswers();
  const breakerStore = memoryBreakerStore();
  const counters = memoryCounters();

  const policyItem = <T extends WorkspacePolicyItem>(workspaceId: string, fields: PolicyFields<T>, at = Date.now()) =>
    ({ id: newId('pol'), workspace_id: workspaceId, organisation_id: 'org_memory', status: 'active', created_at: at, last_updated_at: at, ...fields }) as T;
  const addTo = <T>(map: Map<string, T[]>, workspaceId: string, item: T) => void map.set(workspaceId, [...(map.get(workspaceId) ?? []), item]);

  return {
    configs: {
      async find(workspaceId: string, ref: string) {
        const parsed = parseConfigRef(ref);
        const versions = parsed && configs.get(`${workspaceId}\n${parsed.id}`);
        return parsed && versions?.[(parsed.version ?? versions.length) - 1];
      },
      save(workspaceId: string, config: GatewayConfig, id = newId('cfg')): ResolvedConfig {
        const versions = configs.get(`${workspaceId}\n${id}`) ?? [];
        const saved = deepFreeze({ id, version: versions.length + 1, config: structuredClone(config) });
        configs.set(`${workspaceId}\n${id}`, [...versions, saved]);
        return saved;
      },
    },
    catalog: {
      async find(workspaceId: string, slugOrVirtualKey: string) {
        const slug = normaliseSlug(slugOrVirtualKey);
        return slug === undefined ? undefined : integrations.get(`${workspaceId}\n${slug}`);
      },
      save(workspaceId: string, integration: NewIntegration): ProviderIntegration {
        const now = Math.floor(Date.now() / 1000);
        const saved = deepFreeze({
          id: newId('pvi'),
          name: integration.slug,
          settings: {},
          credentials: {},
          created_at: now,
          updated_at: now,
          ...structuredClone(integration),
          workspace_id: workspaceId,
        });
        integrations.set(`${workspaceId}\n${integration.slug}`, saved);
        return saved;
      },
    },
    guardrails: {
      async find(workspaceId, id) {
        return guardrails.get(`${workspaceId}\n${id}`);
      },
      save(workspaceId, guardrail) {
        const saved = deepFreeze({ id: newId('grd'), ...structuredClone(guardrail) });
        guardrails.set(`${workspaceId}\n${saved.id}`, saved);
        return saved;
      },
    },
    policies: {
      async rateLimits(workspaceId: string) {
        return splitActive(rateLimits.get(workspaceId) ?? [], toActivePolicy);
      },
      async budgets(workspaceId: string) {
        return splitActive(budgets.get(workspaceId) ?? [], toActiveBudget);
      },
      saveRateLimit(workspaceId: string, fields: PolicyFields<RateLimitPolicy>): RateLimitPolicy {
        const item = policyItem<RateLimitPolicy>(workspaceId, fields);
        addTo(rateLimits, workspaceId, item);
        return item;
      },
      saveBudget(workspaceId: string, fields: PolicyFields<UsageLimitPolicy>): UsageLimitPolicy {
        const item = policyItem<UsageLimitPolicy>(workspaceId, fields);
        addTo(budgets, workspaceId, item);
        return item;
      },
    },
    counters,
    cache: answerCache(answers),
    answers,
    breakers: new CircuitBreakers(breakerStore),
    breakerStore,
  };
}
