/**
 * The provider catalog: a workspace's provider integrations, addressed by slug (`@slug` in
 * `x-gateway-provider` or a config's `provider`; `virtual_key` / `x-gateway-virtual-key` is the
 * legacy name for the same thing).
 *
 * One item per integration (keys in `store/keys.ts`, item access in `store/provider-integrations.ts`):
 * id, slug, workspace_id, provider, name, custom_host?, settings (map of non-secret fields),
 * credential_fields (names of the credentials set), credential_hints (map), secrets? (EncryptedBlob
 * of the credentials), created_at, updated_at (epoch seconds), and the revision updates check.
 *
 * The hot-path lookup (`findProviderIntegration`) is one GetItem on a cache miss.
 */
import type { GatewayConfig } from '../config/types';
import { deepFreeze } from '../core/deep-freeze';
import { newId } from '../core/ids';
import { destinationFields, secretCredentialFields, settingFields } from '../providers/provider-fields';
import { decryptSecrets, encryptSecrets, isBlob, type EncryptedBlob } from '../secrets/envelope';
import { LoadingCache } from '../store/loading-cache';
import type { Page } from '../store/newest-first';
import {
  deleteIntegrationItem,
  getIntegrationItem,
  listIntegrationItems,
  putIntegrationItem,
  type IntegrationFields,
  type IntegrationItem,
} from '../store/provider-integrations';

export type CredentialField = (typeof secretCredentialFields)[number];
export type SettingField = (typeof settingFields)[number];

export type ProviderCredentials = Pick<GatewayConfig, CredentialField>;

export type ProviderSettings = Pick<GatewayConfig, SettingField>;

/** An integration as the hot path gets it: everything, credentials decrypted. Deep-frozen. */
export interface ProviderIntegration {
  /** `pvi_…`, time-sortable. */
  id: string;
  /** Unique per workspace: lowercase letters, digits and hyphens, 1–64 characters. */
  slug: string;
  workspace_id: string;
  /** A provider name of lib/providers/registry.ts (canonical, lower-case). */
  provider: string;
  name: string;
  /** A base URL already checked by parseCustomHost. */
  custom_host?: string;
  settings: ProviderSettings;
  credentials: ProviderCredentials;
  /** Epoch seconds. */
  created_at: number;
  updated_at: number;
}

/** An integration as the control routes see it: no credential values, only which are set. */
export interface ProviderIntegrationSummary extends Omit<ProviderIntegration, 'credentials'> {
  /** Credential field → `"set"` or a masked hint of the value (e.g. `sk-…wxyz`). */
  credential_hints: Partial<Record<CredentialField, string>>;
}

export const slugPattern = /^[a-z0-9-]{1,64}$/;

const now = () => Math.floor(Date.now() / 1000);

/** Credentials shown with a hint (so people can tell keys apart); the others only say `"set"`. */
const hintedFields: ReadonlySet<CredentialField> = new Set(['api_key', 'cloudA_access_key_id']);

/** A hint that tells keys apart without revealing them: strings of 20+ characters show 3 + 4. */
export function credentialHint(value: unknown): string {
  if (typeof value === 'string' && value.length >= 20) return `${value.slice(0, 3)}…${value.slice(-4)}`;
  return 'set';
}

function hintsOf(credentials: ProviderCredentials): Partial<Record<CredentialField, string>> {
  const hints: Partial<Record<CredentialField, string>> = {};
  for (const field of secretCredentialFields) {
    if (credentials[field] !== undefined) hints[field] = hintedFields.has(field) ? credentialHint(credentials[field]) : 'set';
  }
  return hints;
}

export class ProviderSlugTakenError extends Error {
  constructor(slug: string) {
    super(`A provider integration with slug "${slug}" already exists in this workspace.`);
    this.name = 'ProviderSlugTakenError';
  }
}

export interface NewProviderIntegration {
  slug: string;
  provider: string;
  name: string;
  custom_host?: string;
  settings: ProviderSettings;
  credentials: ProviderCredentials;
}

/** Creates an integration; ProviderSlugTakenError when the slug is in use in the workspace. */
export async function createProviderIntegration(workspaceId: string, fields: NewProviderIntegration): Promise<ProviderIntegrationSummary> {
  const time = now();
  const summary: ProviderIntegrationSummary = {
    id: newId('pvi'),
    slug: fields.slug,
    workspace_id: workspaceId,
    provider: fields.provider,
    name: fields.name,
    ...(fields.custom_host !== undefined ? { custom_host: fields.custom_host } : {}),
    settings: fields.settings,
    credential_hints: hintsOf(fields.credentials),
    created_at: time,
    updated_at: time,
  };
  const secrets = await sealCredentials(fields.credentials, workspaceId);
  if (!(await putIntegrationItem(storedFields(summary), secrets, { ifAbsent: true }))) throw new ProviderSlugTakenError(fields.slug);
  return summary;
}

/** An update would send the stored credentials to another host (or provider) without sending them again. */
export class ProviderDestinationChangeError extends Error {
  constructor(slug: string) {
    super(`The update changes where "${slug}" sends its requests (provider, custom_host or a host setting), so its credentials must be sent again with it.`);
    this.name = 'ProviderDestinationChangeError';
  }
}

/** Everything that decides where an integration's requests go, as one comparable string. */
function destinationOf(fields: { provider: string; custom_host?: string; settings: ProviderSettings }): string {
  return JSON.stringify([fields.provider, fields.custom_host ?? null, ...destinationFields.map((field) => fields.settings[field] ?? null)]);
}

export interface ProviderIntegrationUpdate {
  provider: string;
  name: string;
  custom_host?: string;
  settings: ProviderSettings;
  /** When given, replaces the whole credential set; when undefined, the stored credentials stay. */
  credentials?: ProviderCredentials;
}

/**
 * Replaces an integration's non-secret fields, and its credentials when `update.credentials` is
 * given; ProviderDestinationChangeError when the stored credentials would follow a changed
 * destination without being sent again. Undefined when the workspace has no integration with that slug. The stored blob is kept
 * as it is when credentials are not replaced, so this never decrypts.
 */
export async function updateProviderIntegration(
  workspaceId: string,
  slug: string,
  update: ProviderIntegrationUpdate,
): Promise<ProviderIntegrationSummary | undefined> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await getIntegrationItem(workspaceId, slug, true);
    if (!existing) return undefined;
    const current = toSummary(existing);
    if (!update.credentials && isBlob(existing.secrets) && destinationOf(update) !== destinationOf(current)) {
      throw new ProviderDestinationChangeError(slug);
    }
    const summary: ProviderIntegrationSummary = {
      id: current.id,
      slug,
      workspace_id: workspaceId,
      provider: update.provider,
      name: update.name,
      ...(update.custom_host !== undefined ? { custom_host: update.custom_host } : {}),
      settings: update.settings,
      credential_hints: update.credentials ? hintsOf(update.credentials) : current.credential_hints,
      created_at: current.created_at,
      updated_at: Math.max(now(), current.updated_at),
    };
    const secrets = update.credentials ? await sealCredentials(update.credentials, workspaceId) : isBlob(existing.secrets) ? existing.secrets : undefined;
    // Same integration (not deleted and re-created meanwhile), unchanged since it was read; else
    // it changed or went concurrently: read again (a delete then answers undefined).
    if (await putIntegrationItem(storedFields(summary), secrets, { ifRevision: { id: current.id, revision: existing.revision } })) return summary;
  }
  throw new Error(`The provider integration "${slug}" kept changing while it was being updated.`);
}

/** Deletes an integration; undefined when there was none. */
export async function deleteProviderIntegration(workspaceId: string, slug: string): Promise<ProviderIntegrationSummary | undefined> {
  const removed = await deleteIntegrationItem(workspaceId, slug);
  return removed ? toSummary(removed) : undefined;
}

/** One integration without its credentials (control routes). */
export async function getProviderIntegration(workspaceId: string, slug: string): Promise<ProviderIntegrationSummary | undefined> {
  if (!slugPattern.test(slug)) return undefined;
  const item = await getIntegrationItem(workspaceId, slug, true);
  return item ? toSummary(item) : undefined;
}

export type ProviderIntegrationPage = Page<ProviderIntegrationSummary>;

/** A workspace's integrations, newest first; `after` is the last id of the previous page. */
export async function listProviderIntegrations(workspaceId: string, options: { limit: number; after?: string }): Promise<ProviderIntegrationPage> {
  const page = await listIntegrationItems(workspaceId, options);
  return { data: page.data.map(toSummary), has_more: page.has_more };
}

// ---------------------------------------------------------------------------------------------
// Hot path

// A found integration is served from memory for 5 s, a missing one for 2 s: an update or delete
// reaches every warm container within 5 s, and unknown slugs do not hammer DynamoDB.
const foundTtlMs = 5_000;
const cache = new LoadingCache<ProviderIntegration>({ maxEntries: 5_000, missingTtlMs: 2_000 });

/**
 * The integration a provider slug (`@slug` or `slug`) or a legacy virtual key names in a workspace,
 * with its credentials decrypted; undefined when there is none. Cached in memory for at most 5 s;
 * one DynamoDB GetItem on a miss (concurrent misses share it).
 */
export async function findProviderIntegration(workspaceId: string, slugOrVirtualKey: string): Promise<ProviderIntegration | undefined> {
  const slug = normaliseSlug(slugOrVirtualKey);
  if (!slug) return undefined;
  return cache.get(`${workspaceId}\0${slug}`, foundTtlMs, () => loadIntegration(workspaceId, slug));
}

/** Where the core reads the provider integrations targets name: the table, through the cache above; a test's map. */
export interface ProviderCatalog {
  find(workspaceId: string, slugOrVirtualKey: string): Promise<ProviderIntegration | undefined>;
}

export const storedCatalog: ProviderCatalog = { find: findProviderIntegration };

/** `@my-slug`, `my-slug`, `My-Slug` → `my-slug`; undefined when it cannot be a slug. */
export function normaliseSlug(value: string): string | undefined {
  if (typeof value !== 'string') return undefined;
  const slug = value.trim().replace(/^@/, '').toLowerCase();
  return slugPattern.test(slug) ? slug : undefined;
}

/** The integration as config fields of a target (provider, custom_host, settings, credentials). */
export function integrationAsConfig(integration: ProviderIntegration): GatewayConfig {
  return {
    provider: integration.provider,
    ...(integration.custom_host !== undefined ? { custom_host: integration.custom_host } : {}),
    ...integration.settings,
    ...integration.credentials,
  } as GatewayConfig;
}

/** Drops the in-memory lookup cache (tests). */
export function clearProviderIntegrationCache(): void {
  cache.clear();
}

async function loadIntegration(workspaceId: string, slug: string): Promise<ProviderIntegration | undefined> {
  const item = await getIntegrationItem(workspaceId, slug, false);
  if (!item) return undefined;
  const { credential_hints: _hints, ...summary } = toSummary(item);
  const credentials = isBlob(item.secrets) ? await decryptSecrets<ProviderCredentials & Record<string, string | object>>(item.secrets, workspaceId) : {};
  return deepFreeze({ ...summary, credentials: pick(credentials, secretCredentialFields) });
}

// ---------------------------------------------------------------------------------------------
// Items

async function sealCredentials(credentials: ProviderCredentials, workspaceId: string): Promise<EncryptedBlob | undefined> {
  const present = pick(credentials, secretCredentialFields);
  if (Object.keys(present).length === 0) return undefined;
  return encryptSecrets(present as Record<string, string | object>, workspaceId);
}

/** What is stored of an entry besides its sealed credentials: the summary, and which credentials are set. */
function storedFields(summary: ProviderIntegrationSummary): IntegrationFields {
  return { ...summary, credential_fields: Object.keys(summary.credential_hints) };
}

function toSummary(item: IntegrationItem & Record<string, any>): ProviderIntegrationSummary {
  const summary: ProviderIntegrationSummary = {
    id: item.id,
    slug: item.slug,
    workspace_id: item.workspace_id,
    provider: item.provider,
    name: item.name,
    settings: pick((item.settings ?? {}) as ProviderSettings, settingFields),
    credential_hints: pick((item.credential_hints ?? {}) as Partial<Record<CredentialField, string>>, secretCredentialFields),
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
  if (typeof item.custom_host === 'string') summary.custom_host = item.custom_host;
  return summary;
}

function pick<T extends object, K extends string>(source: T, fields: readonly K[]): T {
  const picked: Record<string, unknown> = {};
  for (const field of fields) {
    const value = (source as Record<string, unknown>)[field];
    if (value !== undefined && value !== null) picked[field] = value;
  }
  return picked as T;
}
