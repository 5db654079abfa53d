import type { GatewayConfig } from '../config/types';

/** Settings a target inherits from its parents; a child's own value replaces the parent's. */
export interface InheritedSettings {
  override_params?: Record<string, unknown>;
  retry?: GatewayConfig['retry'];
  cache?: GatewayConfig['cache'];
  cb_config?: GatewayConfig['cb_config'];
  request_timeout?: number;
  forward_headers?: string[];
  custom_host?: string;
  strict_api_compliance?: boolean;
  before_request_hooks?: GatewayConfig['before_request_hooks'];
  after_request_hooks?: GatewayConfig['after_request_hooks'];
  input_guardrails?: GatewayConfig['input_guardrails'];
  output_guardrails?: GatewayConfig['output_guardrails'];
}

/** A node of the strategy tree with what it inherited, and its place in the config. */
export interface PlanNode {
  /** Path in the config, e.g. `config.targets[1].targets[0]`; also the breaker's key. */
  path: string;
  config: GatewayConfig;
  settings: InheritedSettings;
  children: PlanNode[];
}

const replacedByChild = [
  'retry',
  'cache',
  'cb_config',
  'request_timeout',
  'forward_headers',
  'custom_host',
  'strict_api_compliance',
  'before_request_hooks',
  'after_request_hooks',
  'input_guardrails',
  'output_guardrails',
] as const;

/** Builds the plan of a validated config: inheritance resolved down the tree. */
export function buildPlan(config: GatewayConfig, parent: InheritedSettings = {}, path = 'config'): PlanNode {
  const settings: InheritedSettings = { ...parent };
  for (const key of replacedByChild) {
    if (config[key] !== undefined) (settings as Record<string, unknown>)[key] = config[key];
  }
  if (config.override_params) settings.override_params = { ...parent.override_params, ...config.override_params };
  const children = (config.targets ?? []).map((target, index) => buildPlan(target, settings, `${path}.targets[${index}]`));
  return { path, config, settings, children };
}

/** A leaf is a target that calls a provider; a node with targets is a strategy. */
export function isLeaf(node: PlanNode): boolean {
  return node.children.length === 0;
}

/** Every leaf under a node, in order. */
export function leavesOf(node: PlanNode): PlanNode[] {
  return isLeaf(node) ? [node] : node.children.flatMap(leavesOf);
}
