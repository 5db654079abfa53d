/*
 * The stores a request reads and writes on its way through the steps, as one object the
 * environment brings: the DynamoDB ones by default (`storedState`), the in-memory ones of
 * `memory-stores.ts` in tests of a step or a worker. Each is the interface its layer owns.
 */
import { activeBudgets, type ActiveBudget } from '../budgets/policies';
import { answerCache, type AnswerCache } from '../cache/semantic-cache';
import { storedCatalog, type ProviderCatalog } from '../catalog/providers';
import { storedConfigs, type SavedConfigs } from '../config/saved-configs';
import { storedGuardrails, type SavedGuardrails } from '../guardrails/saved-guardrails';
import { activePolicies, type ActivePolicy, type ActiveSplit } from '../ratelimit/policies';
import { CircuitBreakers } from '../routing/circuit-breaker';
import { dynamoAnswers } from '../store/answer-store';
import { dynamoBreakerStore } from '../store/breaker-state';
import { dynamoCounters, type CounterStore } from '../store/counters';

/** A workspace's active policies, split by when they can be checked. */
export interface ActivePolicies {
  rateLimits(workspaceId: string): Promise<ActiveSplit<ActivePolicy>>;
  budgets(workspaceId: string): Promise<ActiveSplit<ActiveBudget>>;
}

export interface InferenceStores {
  /** Saved configs a request names (`cfg_…`). */
  configs: SavedConfigs;
  /** Provider integrations a target names (`@slug`, a legacy virtual key). */
  catalog: ProviderCatalog;
  /** Saved guardrails a config's hooks name (`grd_…`). */
  guardrails: SavedGuardrails;
  /** Rate-limit policies and budgets. */
  policies: ActivePolicies;
  /** What the policies and budgets count: request windows, token windows, budget periods. */
  counters: CounterStore;
  /** Answers the response cache keeps. */
  cache: AnswerCache;
  /** The targets' circuit breakers. */
  breakers: CircuitBreakers;
}

/** The stores of a deployment: the state and config tables, and S3, each with its cache in this process. */
export const storedState: InferenceStores = {
  configs: storedConfigs,
  catalog: storedCatalog,
  guardrails: storedGuardrails,
  policies: { rateLimits: activePolicies, budgets: activeBudgets },
  counters: dynamoCounters,
  cache: answerCache(dynamoAnswers),
  breakers: new CircuitBreakers(dynamoBreakerStore),
};
