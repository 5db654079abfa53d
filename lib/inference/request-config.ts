import type { SavedConfigs } from '../config/saved-configs';
import type { GatewayConfig } from '../config/types';
import { canonicalJson } from '../core/canonical-json';
import { sha256Hex } from '../core/sha256';
import { GatewayError } from '../core/errors';
import { buildPlan, type PlanNode } from '../routing/plan';

/** The strategy tree a request follows, and the config's identity (its breaker state is kept under it, per workspace). */
export interface RequestPlan {
  root: PlanNode;
  identity: string;
  /** False when the request named its provider by headers alone. */
  fromConfig: boolean;
  /** True for a saved config: its credentials are stored ones, bound to the destinations stored with them. */
  saved: boolean;
}

/** Which config a request names: none (its headers select the provider), an inline one, or a saved one. */
export type ConfigSource = { kind: 'headers' } | { kind: 'inline'; config: GatewayConfig; plan?: RequestPlan } | { kind: 'saved'; ref: string };

const headerOnlyPlan: RequestPlan = { root: buildPlan({}), identity: 'headers', fromConfig: false, saved: false };

/** The plan of an inline config: its identity is its content's hash, the same whoever sends it. */
export function inlinePlan(config: GatewayConfig): RequestPlan {
  return { root: buildPlan(config), identity: `inline:${configHash(config)}`, fromConfig: true, saved: false };
}

/** The strategy tree of the config a request names, a saved one read from the workspace's store. */
export async function resolveRequestPlan(source: ConfigSource, workspaceId: string, configs: SavedConfigs): Promise<RequestPlan> {
  if (source.kind === 'headers') return headerOnlyPlan;
  if (source.kind === 'inline') return source.plan ?? inlinePlan(source.config);
  const saved = await configs.find(workspaceId, source.ref);
  if (!saved) {
    throw new GatewayError(
      400,
      `x-gateway-config names a saved config "${source.ref.slice(0, 100)}" that does not exist in this workspace (or not in that version). Send a config id from GET /v1/configs, or a JSON config object.`,
      {
        param: 'x-gateway-config',
        code: 'config_not_found',
      },
    );
  }
  refusePromptId(saved.config);
  return { root: buildPlan(saved.config), identity: saved.id, fromConfig: true, saved: true };
}

/**
 * `prompt_id` in a config is refused rather than ignored: a request that meant to run a prompt must
 * not silently send its own body instead. Prompts run on their own route.
 */
export function refusePromptId(config: GatewayConfig, path = 'config'): void {
  if (config.prompt_id !== undefined) {
    throw new GatewayError(
      400,
      `${path}.prompt_id is not supported in configs. Run a saved prompt with POST /v1/prompts/${config.prompt_id}/completions (the config can go along in x-gateway-config).`,
      {
        param: `${path}.prompt_id`,
        code: 'prompt_id_unsupported',
      },
    );
  }
  config.targets?.forEach((target, index) => refusePromptId(target, `${path}.targets[${index}]`));
}

/** SHA-256 of the config's canonical JSON (keys sorted), so equal configs share breaker state. */
export function configHash(config: GatewayConfig): string {
  return sha256Hex(canonicalJson(config));
}
