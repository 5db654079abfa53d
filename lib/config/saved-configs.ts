/**
 * Saved configs: versioned config objects of a workspace, referenced as `x-gateway-config: cfg_…`
 * (latest version) or `cfg_…@<version>`. A config may hold provider credentials, so every stored
 * config is sealed whole with the envelope encryption of lib/secrets/envelope.ts.
 *
 * Stored as a head and one item per version (`store/saved-configs.ts`, keys in `store/keys.ts`;
 * DynamoDB Local has no transactions, so the layout needs none). The head holds id, name,
 * latest_version, the latest version's sealed body, created_at, updated_at (epoch seconds), and
 * deleting_at while a delete runs; a version item holds version, name, sealed body, created_at.
 *
 * The head is the source of truth and holds the latest version itself, so resolving `cfg_…` is one
 * GetItem. Invariant: every version below `latest_version` has its version item (an update first
 * makes sure the version it supersedes is stored, then moves the head with a condition on
 * `latest_version`); the latest version's item may lag, and reads fall back to the head for it.
 * A pinned reference (`cfg_…@3`) is one BatchGetItem of the head and the version item.
 */
import { deepFreeze } from '../core/deep-freeze';
import { pathStep } from '../core/json-path';
import { newId } from '../core/ids';
import { maskedConfigFields } from '../providers/provider-fields';
import { decryptSecrets, encryptSecrets, isBlob } from '../secrets/envelope';
import { LoadingCache } from '../store/loading-cache';
import { destinationOf, hostForChildren } from './secret-destinations';
import type { Page } from '../store/newest-first';
import {
  advanceConfigHead,
  createConfigHead,
  deleteConfigItems,
  listConfigHeads,
  putConfigVersion,
  readConfigHead,
  readConfigHeadAndVersion,
  type ConfigHead,
  type ConfigHeadSummary,
} from '../store/saved-configs';
import type { GatewayConfig } from './types';

/**
 * Config fields holding credentials: masked wherever they appear in an answer. `headers` is the
 * parameter of the webhook and log checks, whose values are often tokens.
 */
export const secretConfigFields: ReadonlySet<string> = new Set([...maskedConfigFields, 'headers']);

/** What answers show in place of a secret config field. */
export const maskedSecret = '********';

/** A saved config at one version, decrypted. */
export interface SavedConfig {
  id: string;
  name: string;
  version: number;
  config: GatewayConfig;
  /** Number of versions (= the latest version number). */
  versions: number;
  /** When the config was created / last given a new version (epoch seconds). */
  created_at: number;
  updated_at: number;
  /** When this version was stored. */
  version_created_at: number;
}

/** A saved config in a list (no config body). */
export interface SavedConfigSummary {
  id: string;
  name: string;
  version: number;
  versions: number;
  created_at: number;
  updated_at: number;
}

export interface ConfigRef {
  id: string;
  /** Undefined for the latest version. */
  version?: number;
}

const idPattern = /^cfg_[0-9a-z]{1,64}$/;
const maxVersion = 9_999_999_999;

/** `cfg_x` → latest, `cfg_x@3` → version 3 (`@latest` is accepted too); undefined when malformed. */
export function parseConfigRef(ref: string): ConfigRef | undefined {
  if (typeof ref !== 'string') return undefined;
  const match = /^(cfg_[0-9a-z]{1,64})(?:@(latest|[1-9][0-9]{0,9}))?$/.exec(ref.trim());
  if (!match) return undefined;
  if (match[2] === undefined || match[2] === 'latest') return { id: match[1] };
  const version = Number(match[2]);
  return version <= maxVersion ? { id: match[1], version } : undefined;
}

const now = () => Math.floor(Date.now() / 1000);

const seal = (config: GatewayConfig, workspaceId: string) => encryptSecrets({ config: config as object }, workspaceId);

async function open(blob: unknown, workspaceId: string): Promise<GatewayConfig> {
  if (!isBlob(blob)) throw new Error('A stored config has no encrypted body.');
  const { config } = await decryptSecrets<{ config: GatewayConfig }>(blob, workspaceId);
  return config;
}

// ---------------------------------------------------------------------------------------------
// Control operations

/** Stores a new config as version 1. */
export async function createSavedConfig(workspaceId: string, input: { name: string; config: GatewayConfig }): Promise<SavedConfig> {
  const id = newId('cfg');
  const time = now();
  const blob = await seal(input.config, workspaceId);
  await createConfigHead({ id, workspace_id: workspaceId, name: input.name, latest_version: 1, config: blob, created_at: time, updated_at: time });
  await putConfigVersion(workspaceId, id, { version: 1, name: input.name, config: blob, created_at: time });
  return { id, name: input.name, version: 1, config: input.config, versions: 1, created_at: time, updated_at: time, version_created_at: time };
}

/** One version (latest when `ref.version` is undefined), decrypted; strongly consistent. */
export async function getSavedConfig(workspaceId: string, ref: ConfigRef): Promise<SavedConfig | undefined> {
  return readConfig(workspaceId, ref, true);
}

export type SavedConfigPage = Page<SavedConfigSummary>;

/** The workspace's configs, newest first; `after` is the last id of the previous page. */
export async function listSavedConfigs(workspaceId: string, options: { limit: number; after?: string }): Promise<SavedConfigPage> {
  const page = await listConfigHeads(workspaceId, options);
  return { data: page.data.map(toSummary), has_more: page.has_more };
}

export type UpdateResult = SavedConfig | 'not_found' | 'conflict';

/**
 * Stores `input.config` as a new version (older versions stay readable). With `expectedVersion`,
 * answers 'conflict' unless that is still the latest version (the caller based the new version on
 * it); without it, concurrent updates are serialised and each gets its own version number.
 */
export async function updateSavedConfig(
  workspaceId: string,
  id: string,
  input: { name?: string; config: GatewayConfig },
  options: { expectedVersion?: number } = {},
): Promise<UpdateResult> {
  if (!idPattern.test(id)) return 'not_found';
  for (let attempt = 0; attempt < 5; attempt++) {
    const head = await readConfigHead(workspaceId, id, true);
    if (!head) return 'not_found';
    const current = Number(head.latest_version);
    if (options.expectedVersion !== undefined && current !== options.expectedVersion) return 'conflict';
    // The version about to be superseded must have its own item before the head moves past it.
    await putConfigVersion(workspaceId, id, { version: current, name: head.name, config: head.config, created_at: head.updated_at }, { onlyIfAbsent: true });

    const next = current + 1;
    const time = Math.max(now(), Number(head.updated_at));
    const name = input.name ?? head.name;
    const blob = await seal(input.config, workspaceId);
    if (!(await advanceConfigHead(workspaceId, id, { current, next, name, config: blob, updatedAt: time }))) {
      if (options.expectedVersion !== undefined) return 'conflict';
      continue; // another update (or a delete) won: read the head again
    }
    await putConfigVersion(workspaceId, id, { version: next, name, config: blob, created_at: time });
    return { id, name, version: next, config: input.config, versions: next, created_at: Number(head.created_at), updated_at: time, version_created_at: time };
  }
  return 'conflict';
}

/** Deletes a config and all its versions; undefined when there was none. */
export async function deleteSavedConfig(workspaceId: string, id: string): Promise<SavedConfigSummary | undefined> {
  if (!idPattern.test(id)) return undefined;
  const old = await deleteConfigItems(workspaceId, id, now());
  // A delete that an earlier, interrupted delete had started finishes the work but reports 404.
  return old && old.deleting_at === undefined ? toSummary(old) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Hot path

// The latest version of a config is cached for 5 s (an update or delete reaches every warm
// container within 5 s); a pinned version is immutable, cached for 60 s (a delete reaches pinned
// references within a minute); an unknown reference for 2 s.
const latestTtlMs = 5_000;
const pinnedTtlMs = 60_000;

export interface ResolvedConfig {
  id: string;
  version: number;
  config: GatewayConfig;
}

const cache = new LoadingCache<ResolvedConfig>({ maxEntries: 2_000, missingTtlMs: 2_000 });

/**
 * The config a saved-config reference (`cfg_…` or `cfg_…@3`) names in a workspace, decrypted and
 * deep-frozen; undefined when there is none (or the reference is malformed). Cached in memory.
 */
export async function findSavedConfig(workspaceId: string, ref: string): Promise<ResolvedConfig | undefined> {
  const parsed = parseConfigRef(ref);
  if (!parsed) return undefined;
  const key = `${workspaceId}\0${parsed.id}\0${parsed.version ?? 'latest'}`;
  return cache.get(key, parsed.version === undefined ? latestTtlMs : pinnedTtlMs, () =>
    readConfig(workspaceId, parsed, false).then((found) => (found ? deepFreeze({ id: found.id, version: found.version, config: found.config }) : undefined)),
  );
}

/** Where the core reads the saved configs requests name: the table, through the cache above; a test's map. */
export interface SavedConfigs {
  find(workspaceId: string, ref: string): Promise<ResolvedConfig | undefined>;
}

export const storedConfigs: SavedConfigs = { find: findSavedConfig };

/** Drops the in-memory lookup cache (tests). */
export function clearSavedConfigCache(): void {
  cache.clear();
}

// ---------------------------------------------------------------------------------------------
// Masking (answers never show credentials)

/** A copy of `config` with every secret field, at any depth, replaced by `maskedSecret`. */
export function maskConfigSecrets<T>(config: T): T {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      out[key] = secretConfigFields.has(key) && child !== undefined && child !== null ? maskedSecret : walk(child);
    }
    return out;
  };
  return walk(config) as T;
}

/** The JSON path of `key` under `path`: `.name` for a plain name, `["odd key"]` otherwise. */
const pathOf = (path: string, key: string) => `${path}${pathStep(key)}`;

/** JSON paths (`config.targets[0].api_key`; `root` names the value, `checks` for a guardrail's) of secret fields whose value is the mask placeholder. */
export function maskedSecretPaths(config: unknown, root = 'config'): string[] {
  const found: string[] = [];
  const walk = (value: unknown, path: string) => {
    if (Array.isArray(value)) return value.forEach((child, index) => walk(child, `${path}[${index}]`));
    if (value === null || typeof value !== 'object') return;
    for (const [key, child] of Object.entries(value)) {
      const childPath = pathOf(path, key);
      if (secretConfigFields.has(key) && child === maskedSecret) found.push(childPath);
      else walk(child, childPath);
    }
  };
  walk(config, root);
  return found;
}

/**
 * Puts back, in `input`, each secret field holding the mask placeholder, from the same JSON path of
 * `previous` (so an answer can be edited and sent back). Returns the paths it could not fill, and
 * the paths of kept secrets whose destination changed (provider, catalog entry, host, cloud
 * destination or check URL, inherited hosts included): a secret only ever goes where it was stored
 * for, so moving it needs the secret itself again.
 */
export function restoreMaskedSecrets(input: unknown, previous: unknown, root = 'config'): { config: unknown; unresolved: string[]; moved: string[] } {
  const unresolved: string[] = [];
  const moved: string[] = [];
  // `host` and `hostBefore` are the custom_host a config target inherits, now and before.
  const walk = (value: unknown, before: unknown, path: string, host: unknown, hostBefore: unknown): unknown => {
    if (Array.isArray(value))
      return value.map((child, index) => walk(child, Array.isArray(before) ? before[index] : undefined, `${path}[${index}]`, host, hostBefore));
    if (value === null || typeof value !== 'object') return value;
    const node = value as Record<string, unknown>;
    const old = before !== null && typeof before === 'object' && !Array.isArray(before) ? (before as Record<string, unknown>) : {};
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(node)) {
      const childPath = pathOf(path, key);
      if (secretConfigFields.has(key) && child === maskedSecret) {
        if (Object.hasOwn(old, key) && old[key] !== undefined && old[key] !== null && old[key] !== maskedSecret) {
          out[key] = old[key];
          if (destinationOf(node, host) !== destinationOf(old, hostBefore)) moved.push(childPath);
        } else {
          unresolved.push(childPath);
          out[key] = child;
        }
      } else if (key === 'targets') {
        out[key] = walk(child, old[key], childPath, hostForChildren(node, host), hostForChildren(old, hostBefore));
      } else {
        out[key] = walk(child, old[key], childPath, undefined, undefined);
      }
    }
    return out;
  };
  return { config: walk(input, previous, root, undefined, undefined), unresolved, moved };
}

// ---------------------------------------------------------------------------------------------
// Items

async function readConfig(workspaceId: string, ref: ConfigRef, consistent: boolean): Promise<SavedConfig | undefined> {
  if (!idPattern.test(ref.id)) return undefined;
  let head: ConfigHead | undefined;
  let version: { config: unknown; created_at: number } | undefined;
  if (ref.version === undefined) {
    head = await readConfigHead(workspaceId, ref.id, consistent);
  } else {
    ({ head, version } = await readConfigHeadAndVersion(workspaceId, ref.id, ref.version, consistent));
  }
  if (!head) return undefined;
  const latest = Number(head.latest_version);
  const wanted = ref.version ?? latest;
  if (wanted > latest) return undefined;
  // The latest version is in the head (its own item may not be written yet).
  const source = wanted === latest ? { config: head.config, created_at: head.updated_at } : version;
  if (!source) return undefined;
  return {
    id: head.id,
    name: head.name,
    version: wanted,
    config: await open(source.config, workspaceId),
    versions: latest,
    created_at: Number(head.created_at),
    updated_at: Number(head.updated_at),
    version_created_at: Number(source.created_at),
  };
}

function toSummary(item: ConfigHeadSummary): SavedConfigSummary {
  return {
    id: item.id,
    name: item.name,
    version: Number(item.latest_version),
    versions: Number(item.latest_version),
    created_at: Number(item.created_at),
    updated_at: Number(item.updated_at),
  };
}
