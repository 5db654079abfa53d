/**
 * Saved prompts and partials of a workspace, versioned like saved configs: versions are numbered
 * from 1 and immutable; the first is published, and `makeDefault` publishes another. A prompt is
 * addressed by its id or its slug, a partial by its id or its name (the name templates include).
 *
 * Nothing in a prompt is a credential (`provider` and `virtual_key` name catalog entries), so
 * prompts are stored in the clear.
 *
 * Stored as a head, one item per version and one slug item (`store/prompts.ts`). A new version's
 * item is written first, with a condition on its number, and the head moves forward to it after;
 * so two concurrent writers never share a number, and a head never names a missing version.
 */
import { randomBytes } from 'node:crypto';
import { GatewayError, notFound } from '../core/errors';
import { newId } from '../core/ids';
import { LoadingCache } from '../store/loading-cache';
import type { Page } from '../store/newest-first';
import {
  advanceTemplateHead,
  claimTemplateSlug,
  countTemplateHeads,
  createTemplateHead,
  deleteTemplateItems,
  listTemplateHeads,
  listTemplateVersions,
  publishTemplateVersion,
  putTemplateVersion,
  readTemplateHead,
  readTemplateSlug,
  readTemplateVersion,
  releaseTemplateSlug,
  type PromptKind,
  type TemplateHead,
  type TemplateVersion,
} from '../store/prompts';

export type { PromptKind } from '../store/prompts';

/** One version of a prompt or partial, with its head's facts. */
export interface SavedTemplate {
  id: string;
  slug: string;
  name: string;
  collection_id?: string;
  version: number;
  latest_version: number;
  published_version: number;
  fields: Record<string, unknown>;
  created_at: number;
  updated_at: number;
  version_created_at: number;
}

/** Which version a reference selects: the published one, the latest, or a number. */
export type VersionSelector = 'published' | 'latest' | number;

export interface TemplateRef {
  /** An id or a slug (a partial's name). */
  key: string;
  version: VersionSelector;
}

const idPatterns: Record<PromptKind, RegExp> = { PROMPT: /^prompt_[0-9a-z]{26}$/, PARTIAL: /^partial_[0-9a-z]{26}$/ };
const idPrefixes: Record<PromptKind, string> = { PROMPT: 'prompt', PARTIAL: 'partial' };
const keyPattern = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;
const maxVersion = 9_999_999_999;

/** `abc` → published, `abc@latest`, `abc@3`; undefined when it cannot name anything. */
export function parseTemplateRef(raw: string): TemplateRef | undefined {
  const match = /^([^@]+)(?:@(latest|[1-9][0-9]{0,9}))?$/.exec(raw.trim());
  if (!match || !keyPattern.test(match[1]!)) return undefined;
  if (match[2] === undefined) return { key: match[1]!, version: 'published' };
  if (match[2] === 'latest') return { key: match[1]!, version: 'latest' };
  const version = Number(match[2]);
  return version <= maxVersion ? { key: match[1]!, version } : undefined;
}

const now = () => Math.floor(Date.now() / 1000);

/** A readable slug made from a prompt's name; `partials` is a path of its own, never a slug. */
export function slugOf(name: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  if (!slug) return 'prompt';
  return slug === 'partials' ? 'partials-prompt' : slug;
}

async function idOf(kind: PromptKind, workspaceId: string, key: string, consistent: boolean): Promise<string | undefined> {
  if (idPatterns[kind].test(key)) return key;
  if (!keyPattern.test(key)) return undefined;
  return readTemplateSlug(kind, workspaceId, key, consistent);
}

function saved(head: TemplateHead, version: TemplateVersion): SavedTemplate {
  return {
    id: head.id,
    slug: head.slug,
    name: head.name,
    ...(head.collection_id !== undefined ? { collection_id: head.collection_id } : {}),
    version: Number(version.version),
    latest_version: Number(head.latest_version),
    published_version: Number(head.published_version),
    fields: version.fields ?? {},
    created_at: Number(head.created_at),
    updated_at: Number(head.updated_at),
    version_created_at: Number(version.created_at),
  };
}

/**
 * Stores a new prompt or partial as version 1 (published). A prompt's slug comes from its name and
 * gets a suffix when taken; a partial's slug is its name, which must be free (409 otherwise).
 */
export async function createTemplate(
  kind: PromptKind,
  workspaceId: string,
  input: { name: string; collection_id?: string; fields: Record<string, unknown> },
): Promise<SavedTemplate> {
  const id = newId(idPrefixes[kind]);
  let slug = kind === 'PARTIAL' ? input.name : slugOf(input.name);
  for (let attempt = 0; !(await claimTemplateSlug(kind, workspaceId, slug, id)); attempt++) {
    if (kind === 'PARTIAL')
      throw new GatewayError(
        409,
        `A partial named "${input.name}" exists already; change it with PUT /v1/prompts/partials/${input.name}, or pick another name.`,
        { code: 'partial_exists', param: 'name' },
      );
    if (attempt >= 5)
      throw new GatewayError(409, 'Could not find a free slug for this prompt name; try another name.', { code: 'prompt_slug_taken', param: 'name' });
    slug = `${slugOf(input.name).slice(0, 50)}-${randomBytes(3).toString('hex')}`;
  }
  const time = now();
  const version: TemplateVersion = { version: 1, fields: input.fields, created_at: time };
  const head: TemplateHead = {
    id,
    workspace_id: workspaceId,
    slug,
    name: input.name,
    latest_version: 1,
    published_version: 1,
    collection_id: input.collection_id,
    created_at: time,
    updated_at: time,
  };
  try {
    await putTemplateVersion(kind, workspaceId, id, version);
    await createTemplateHead(kind, head);
  } catch (error) {
    await releaseTemplateSlug(kind, workspaceId, slug).catch(() => undefined);
    throw error;
  }
  return saved(head, version);
}

/** One version of a prompt or partial, read consistently; undefined when there is none. */
export async function getTemplate(kind: PromptKind, workspaceId: string, ref: TemplateRef, consistent = true): Promise<SavedTemplate | undefined> {
  const id = await idOf(kind, workspaceId, ref.key, consistent);
  if (!id) return undefined;
  const head = await readTemplateHead(kind, workspaceId, id, consistent);
  if (!head) return undefined;
  const number = ref.version === 'latest' ? Number(head.latest_version) : ref.version === 'published' ? Number(head.published_version) : ref.version;
  if (number > Number(head.latest_version)) return undefined;
  const version = await readTemplateVersion(kind, workspaceId, id, number, consistent);
  return version ? saved(head, version) : undefined;
}

/**
 * Stores a new version. `fieldsFor` gets the latest version's fields (what `patch` fills from) and
 * answers the new version's. Concurrent writers each get a number of their own.
 */
export async function addTemplateVersion(
  kind: PromptKind,
  workspaceId: string,
  key: string,
  fieldsFor: (latest: SavedTemplate) => Record<string, unknown>,
): Promise<SavedTemplate | undefined> {
  const id = await idOf(kind, workspaceId, key, true);
  if (!id) return undefined;
  for (let attempt = 0; attempt < 8; attempt++) {
    const latest = await getTemplate(kind, workspaceId, { key: id, version: 'latest' });
    if (!latest) return undefined;
    const next = latest.latest_version + 1;
    const time = Math.max(now(), latest.updated_at);
    const version: TemplateVersion = { version: next, fields: fieldsFor(latest), created_at: time };
    if (!(await putTemplateVersion(kind, workspaceId, id, version))) continue; // another writer took this number
    if (!(await advanceTemplateHead(kind, workspaceId, id, next, time))) {
      // Deleted meanwhile, or a later version landed first (then ours is stored and still listed).
      const head = await readTemplateHead(kind, workspaceId, id, true);
      if (!head) return undefined;
      return saved(head, version);
    }
    return { ...latest, version: next, latest_version: next, fields: version.fields, updated_at: time, version_created_at: time };
  }
  throw new GatewayError(409, `${kind === 'PROMPT' ? 'Prompt' : 'Partial'} ${key} is being changed by other requests at the same time; retry.`, {
    code: 'prompt_conflict',
  });
}

/** Publishes version `version`; 'no_version' when it does not exist. */
export async function publishTemplate(
  kind: PromptKind,
  workspaceId: string,
  key: string,
  version: number,
): Promise<SavedTemplate | 'not_found' | 'no_version'> {
  const id = await idOf(kind, workspaceId, key, true);
  if (!id) return 'not_found';
  if (!(await publishTemplateVersion(kind, workspaceId, id, version, now()))) {
    return (await readTemplateHead(kind, workspaceId, id, true)) ? 'no_version' : 'not_found';
  }
  return (await getTemplate(kind, workspaceId, { key: id, version })) ?? 'not_found';
}

/** Every version, newest first, with the head. */
export async function templateVersions(
  kind: PromptKind,
  workspaceId: string,
  key: string,
): Promise<{ head: TemplateHead; versions: TemplateVersion[] } | undefined> {
  const id = await idOf(kind, workspaceId, key, true);
  if (!id) return undefined;
  const head = await readTemplateHead(kind, workspaceId, id, true);
  if (!head) return undefined;
  const versions = (await listTemplateVersions(kind, workspaceId, id)).filter((version) => Number(version.version) <= Number(head.latest_version));
  return { head, versions };
}

export async function listTemplates(
  kind: PromptKind,
  workspaceId: string,
  page: { limit: number; after?: string },
): Promise<Page<TemplateHead> & { total: number }> {
  const [found, total] = await Promise.all([listTemplateHeads(kind, workspaceId, page), countTemplateHeads(kind, workspaceId)]);
  return { ...found, total };
}

export async function deleteTemplate(kind: PromptKind, workspaceId: string, key: string): Promise<TemplateHead | undefined> {
  const id = await idOf(kind, workspaceId, key, true);
  if (!id) return undefined;
  const old = await deleteTemplateItems(kind, workspaceId, id, now());
  return old && old.deleting_at === undefined ? old : undefined;
}

// ---------------------------------------------------------------------------------------------
// Hot path: a run reads the prompt and its partials through short-lived caches, as saved configs
// are read (a new version or publish reaches every warm container within 5 s; a pinned version
// is immutable and kept for a minute).

const latestTtlMs = 5_000;
const pinnedTtlMs = 60_000;
const prompts = new LoadingCache<SavedTemplate>({ maxEntries: 2_000, missingTtlMs: 2_000 });
const partials = new LoadingCache<SavedTemplate>({ maxEntries: 2_000, missingTtlMs: 2_000 });

export function findPrompt(workspaceId: string, ref: TemplateRef): Promise<SavedTemplate | undefined> {
  const ttl = typeof ref.version === 'number' ? pinnedTtlMs : latestTtlMs;
  return prompts.get(`${workspaceId}\0${ref.key}\0${ref.version}`, ttl, () => getTemplate('PROMPT', workspaceId, ref, false));
}

/** The published text of each named partial that exists. */
export async function findPartials(workspaceId: string, names: readonly string[], options: { fresh?: boolean } = {}): Promise<Record<string, string>> {
  // No prototype: a partial may be named `__proto__` or `constructor` like any other.
  const found: Record<string, string> = Object.create(null);
  await Promise.all(
    names.map(async (name) => {
      if (!keyPattern.test(name)) return;
      const read = () => getTemplate('PARTIAL', workspaceId, { key: name, version: 'published' }, options.fresh === true);
      const partial = options.fresh ? await read() : await partials.get(`${workspaceId}\0${name}`, latestTtlMs, read);
      if (partial && typeof partial.fields.string === 'string') found[name] = partial.fields.string;
    }),
  );
  return found;
}

export const promptNotFound = (raw: string) =>
  notFound(`No prompt ${raw.slice(0, 120)} in this workspace (or not in that version). List them with GET /v1/prompts.`, 'prompt_not_found');
export const partialNotFound = (raw: string) =>
  notFound(`No partial ${raw.slice(0, 120)} in this workspace (or not in that version). List them with GET /v1/prompts/partials.`, 'partial_not_found');
