import { parseConfigRef, type SavedConfigs } from '../config/saved-configs';
import { configError, parseConfigHeader } from '../config/schema';
import type { GatewayConfig } from '../config/types';
import { canonicalJson } from '../core/canonical-json';
import { sha256Hex } from '../core/sha256';
import { GatewayError } from '../core/errors';
import { buildPlan, type PlanNode } from '../routing/plan';

/** The strategy tree a request follows, and the identity its breaker state is kept under. */
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

/**
 * Inline configs already read, by the header's text: clients send the same config on every request,
 * and validating, planning and hashing it again each time is most of a cached answer's cost. Only
 * valid configs are kept (a refused one throws before), and plans are only read once built.
 */
const inlineConfigs = new Map<string, { config: GatewayConfig; plan: RequestPlan }>();
const maxInlineConfigs = 256;
const maxRememberedHeaderLength = 16 * 1024;

function readInlineConfig(value: string): ConfigSource {
  const known = inlineConfigs.get(value);
  if (known) return { kind: 'inline', ...known };
  const parsed = parseConfigHeader(value);
  if (!parsed.ok) throw configError(parsed.issues);
  refusePromptId(parsed.config);
  const plan: RequestPlan = { root: buildPlan(parsed.config), identity: `inline:${configHash(parsed.config)}`, fromConfig: true, saved: false };
  if (value.length <= maxRememberedHeaderLength) {
    if (inlineConfigs.size >= maxInlineConfigs) inlineConfigs.delete(inlineConfigs.keys().next().value!);
    inlineConfigs.set(value, { config: parsed.config, plan });
  }
  return { kind: 'inline', config: parsed.config, plan };
}

/**
 * Reads `x-gateway-config`: a JSON config when it starts with `{` (validated here), else the id of
 * a saved config (`cfg_…`, optionally `@<version>`). Without it, the request's headers alone select
 * the provider.
 */
export function readConfigHeader(headers: Record<string, string>): ConfigSource {
  const value = headers['x-gateway-config']?.trim();
  if (!value) return { kind: 'headers' };
  if (value.startsWith('{')) return readInlineConfig(value);
  if (!parseConfigRef(value)) {
    throw new GatewayError(
      400,
      `x-gateway-config must be a config as a JSON object (starting with "{") or the id of a saved config such as cfg_abc123 or cfg_abc123@2; got ${JSON.stringify(value.slice(0, 100))}.`,
      { param: 'x-gateway-config', code: 'invalid_config_header' },
    );
  }
  return { kind: 'saved', ref: value };
}

/** The strategy tree of the config a request names, a saved one read from the workspace's store. */
export async function resolveRequestPlan(source: ConfigSource, workspaceId: string, configs: SavedConfigs): Promise<RequestPlan> {
  if (source.kind === 'headers') return headerOnlyPlan;
  if (source.kind === 'inline')
    return source.plan ?? { root: buildPlan(source.config), identity: `inline:${configHash(source.config)}`, fromConfig: true, saved: false };
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
function refusePromptId(config: GatewayConfig, path = 'config'): void {
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
