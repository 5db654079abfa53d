/**
 * The config object of the API spec (`x-gateway-config`, saved configs, and every `targets[]` item),
 * as plain types. `schema.ts` validates input against exactly this shape.
 */
import type { Guardrail, Hook } from '../guardrails/hook-types';
import type { ProviderSettings } from '../providers/types';

export type StrategyMode = 'single' | 'loadbalance' | 'fallback' | 'conditional';

export interface StrategyCondition {
  /** Mongo-style query over `metadata.*`, `params.*` and `url.pathname`. */
  query: Record<string, unknown>;
  /** The `name` of the target to use when the query matches. */
  then: string;
}

export interface Strategy {
  mode: StrategyMode;
  conditions?: StrategyCondition[];
  default?: string;
  on_status_codes?: number[];
}

export interface CacheSettings {
  mode: 'simple' | 'semantic';
  max_age?: number;
}

export interface RetrySettings {
  attempts: number;
  on_status_codes?: number[];
  use_retry_after_headers?: boolean;
}

export interface CircuitBreakerSettings {
  failure_threshold: number;
  cooldown_interval: number;
  failure_status_codes?: number[];
}

export interface GatewayConfig extends ProviderSettings {
  strategy?: Strategy;
  targets?: GatewayConfig[];
  name?: string;
  provider?: string;
  virtual_key?: string;
  prompt_id?: string;
  request_timeout?: number;
  cache?: CacheSettings;
  retry?: RetrySettings;
  cb_config?: CircuitBreakerSettings;
  weight?: number;
  on_status_codes?: number[];
  forward_headers?: string[];
  override_params?: Record<string, unknown>;
  before_request_hooks?: Hook[];
  after_request_hooks?: Hook[];
  input_guardrails?: Guardrail[];
  output_guardrails?: Guardrail[];
}

/** One config violation, reported as an AB01 error. */
export interface ConfigIssue {
  /** JSON path of the offending value, e.g. `config.targets[1].retry.attempts`. */
  param: string;
  message: string;
}
