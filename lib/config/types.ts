/**
 * The config object of the API spec (`x-gateway-config`, saved configs, and every `targets[]` item),
 * as plain types. `schema.ts` validates input against exactly this shape.
 */

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

export interface Feedback {
  value?: number;
  weight?: number;
  metadata?: Record<string, unknown>;
}

export interface HookCheck {
  id: string;
  parameters: Record<string, unknown>;
}

/** What a hook does when its checks fail or pass: feedback for the log, and whether to deny. */
export interface HookOutcome {
  feedback?: Feedback;
  deny?: boolean;
}

/** A before- or after-request hook. `deny` may stand at the top level or in `on_fail`/`on_success`; both mean the same. */
export interface Hook {
  id: string;
  type?: 'guardrail' | 'mutator';
  deny?: boolean;
  async?: boolean;
  checks?: HookCheck[];
  on_fail?: HookOutcome;
  on_success?: HookOutcome;
}

/** A saved guardrail's id, or an inline guardrail whose extra properties are its checks (`"<check id>": {parameters}`). */
export type Guardrail = string | ({ id?: string; deny?: boolean; async?: boolean; on_fail?: HookOutcome; on_success?: HookOutcome } & Record<string, unknown>);

export interface Deployment {
  deployment_id: string;
  alias: string;
  api_version: string;
  is_default?: boolean;
}

export interface GatewayConfig {
  strategy?: Strategy;
  targets?: GatewayConfig[];
  name?: string;
  strict_api_compliance?: boolean;
  provider?: string;
  api_key?: string;
  virtual_key?: string;
  prompt_id?: string;
  request_timeout?: number;
  cache?: CacheSettings;
  retry?: RetrySettings;
  cb_config?: CircuitBreakerSettings;
  weight?: number;
  on_status_codes?: number[];
  custom_host?: string;
  forward_headers?: string[];
  override_params?: Record<string, unknown>;
  resource_name?: string;
  deployment_id?: string;
  api_version?: string;
  deployments?: Deployment[];
  cloudA_access_key_id?: string;
  cloudA_secret_access_key?: string;
  cloudA_region?: string;
  cloudA_session_token?: string;
  compat_organization?: string;
  compat_project?: string;
  cloudB_project_id?: string;
  cloudB_region?: string;
  cloudB_service_account_json?: Record<string, unknown>;
  cloudC_region?: string;
  cloudC_deployment_name?: string;
  cloudC_endpoint_name?: string;
  cloudC_api_version?: string;
  cloudC_deployment_type?: 'serverless' | 'managed';
  cloudC_resource_name?: string;
  cloudC_deployment_id?: string;
  cloudC_model_name?: string;
  cloudC_entra_scope?: string;
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
