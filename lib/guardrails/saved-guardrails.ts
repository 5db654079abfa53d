/**
 * Saved guardrails: a workspace's named sets of checks with their actions, referenced from a
 * config's `input_guardrails` / `output_guardrails` by id. Checks and actions are sealed with the
 * workspace's envelope encryption (a webhook check's headers may carry a token); the name and
 * times are not, so lists need no decryption.
 */
import type { Feedback, HookCheck } from './hook-types';
import { newId } from '../core/ids';
import { decryptSecrets, encryptSecrets, isBlob } from '../secrets/envelope';
import { deleteGuardrailItem, getGuardrailItem, listGuardrailItems, putGuardrailItem, type GuardrailItem } from '../store/guardrails';
import { LoadingCache } from '../store/loading-cache';
import type { Page } from '../store/newest-first';
import type { SavedGuardrailSpec } from './hook-specs';

export interface GuardrailActions {
  deny: boolean;
  async: boolean;
  on_fail?: { feedback?: Feedback; deny?: boolean };
  on_success?: { feedback?: Feedback };
}

export interface GuardrailFields {
  name: string;
  checks: HookCheck[];
  actions: GuardrailActions;
}

export interface SavedGuardrail extends GuardrailFields {
  /** `grd_…`, time-sortable. */
  id: string;
  /** Epoch seconds. */
  created_at: number;
  updated_at: number;
}

export type GuardrailSummary = Pick<SavedGuardrail, 'id' | 'name' | 'created_at' | 'updated_at'>;

const idPattern = /^grd_[0-9a-z]{26}$/;
const now = () => Math.floor(Date.now() / 1000);

export function isGuardrailId(value: string): boolean {
  return idPattern.test(value);
}

export async function createGuardrail(workspaceId: string, fields: GuardrailFields): Promise<SavedGuardrail> {
  const at = now();
  const saved: SavedGuardrail = { id: newId('grd'), ...fields, created_at: at, updated_at: at };
  if (!(await putGuardrailItem(await seal(workspaceId, saved), 'ifAbsent')))
    throw new Error(`Guardrail id ${saved.id} is taken; ids are random, so this should not happen.`);
  return saved;
}

export async function getGuardrail(workspaceId: string, id: string): Promise<SavedGuardrail | undefined> {
  if (!isGuardrailId(id)) return undefined;
  const item = await getGuardrailItem(workspaceId, id, true);
  return item && open(workspaceId, item);
}

export async function listGuardrails(workspaceId: string, page: { limit: number; after?: string }): Promise<Page<GuardrailSummary>> {
  const { data, has_more } = await listGuardrailItems(workspaceId, page);
  return { data: data.map(({ id, name, created_at, updated_at }) => ({ id, name, created_at, updated_at })), has_more };
}

/** Replaces a guardrail whole; undefined when the workspace has none of that id. Running requests see it within 5 s. */
export async function replaceGuardrail(workspaceId: string, id: string, fields: GuardrailFields): Promise<SavedGuardrail | undefined> {
  const current = await getGuardrail(workspaceId, id);
  if (!current) return undefined;
  const saved: SavedGuardrail = { id, ...fields, created_at: current.created_at, updated_at: now() };
  return (await putGuardrailItem(await seal(workspaceId, saved), 'ifPresent')) ? saved : undefined;
}

export async function deleteGuardrail(workspaceId: string, id: string): Promise<boolean> {
  return isGuardrailId(id) && deleteGuardrailItem(workspaceId, id);
}

const lookupTtlMs = 5_000;
const lookups = new LoadingCache<SavedGuardrailSpec>({ maxEntries: 5_000, missingTtlMs: 2_000 });

/**
 * The guardrail a config names, for the hot path: in memory for at most 5 s, one GetItem on a
 * miss (concurrent misses share it).
 */
export function findSavedGuardrail(workspaceId: string, id: string): Promise<SavedGuardrailSpec | undefined> {
  if (!isGuardrailId(id)) return Promise.resolve(undefined);
  return lookups.get(`${workspaceId}\0${id}`, lookupTtlMs, async () => {
    const item = await getGuardrailItem(workspaceId, id, false);
    if (!item) return undefined;
    const { checks, actions } = await open(workspaceId, item);
    return { id, checks, actions };
  });
}

/** Where the hooks steps read the guardrails configs name: the table, through the cache above; a test's map. */
export interface SavedGuardrails {
  find(workspaceId: string, id: string): Promise<SavedGuardrailSpec | undefined>;
}

export const storedGuardrails: SavedGuardrails = { find: findSavedGuardrail };

async function seal(workspaceId: string, saved: SavedGuardrail): Promise<GuardrailItem> {
  const body = await encryptSecrets({ checks: saved.checks, actions: saved.actions as object }, workspaceId);
  return { id: saved.id, workspace_id: workspaceId, name: saved.name, body, created_at: saved.created_at, updated_at: saved.updated_at };
}

async function open(workspaceId: string, item: GuardrailItem): Promise<SavedGuardrail> {
  if (!isBlob(item.body)) throw new Error(`Guardrail ${item.id} has no sealed body.`);
  const { checks, actions } = await decryptSecrets<{ checks: HookCheck[]; actions: GuardrailActions }>(item.body, workspaceId);
  return { id: item.id, name: item.name, checks, actions, created_at: item.created_at, updated_at: item.updated_at };
}
