import { GatewayError } from '../core/errors';
import { newId } from '../core/ids';
import { listAllApiKeyItems } from '../store/api-keys';
import {
  getWorkspaceItem,
  listWorkspaceItems,
  putWorkspaceItem,
  updateWorkspaceItem,
  type WorkspaceCacheSettings,
  type WorkspaceRecord,
  type WorkspaceStatus,
} from '../store/workspaces';

export type { WorkspaceCacheSettings, WorkspaceRecord, WorkspaceStatus };

/** Workspace ids are `ws_` and 26 base32 characters; anything else names no workspace and is not looked up. */
export const workspaceIdPattern = /^ws_[0-9a-z]{1,64}$/;

const seconds = (ms: number) => Math.floor(ms / 1000);

/** A readable label from the name (the id is what addresses a workspace). */
export function slugOf(name: string): string {
  const slug = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
  return slug || 'workspace';
}

export async function createWorkspace(fields: {
  id?: string;
  organisationId: string;
  name: string;
  description?: string;
  slug?: string;
  isDefault?: boolean;
  now?: number;
}): Promise<WorkspaceRecord> {
  const now = fields.now ?? seconds(Date.now());
  const record: WorkspaceRecord = {
    id: fields.id ?? newId('ws'),
    organisation_id: fields.organisationId,
    name: fields.name,
    slug: fields.slug ?? slugOf(fields.name),
    description: fields.description ?? null,
    status: 'active',
    is_default: fields.isDefault ?? false,
    created_at: now,
    last_updated_at: now,
    archived_at: null,
    cache: null,
  };
  if (!(await putWorkspaceItem(record))) throw new Error(`Workspace ${record.id} exists already.`);
  return record;
}

/** A workspace of the organisation; undefined for an unknown id or another organisation's workspace. */
export async function findWorkspace(organisationId: string, id: string): Promise<WorkspaceRecord | undefined> {
  const found = await getWorkspaceItem(id);
  return found && found.organisation_id === organisationId ? found : undefined;
}

/** The organisation's workspaces with one of the statuses, newest first. */
export async function listWorkspaces(organisationId: string, statuses: readonly WorkspaceStatus[]): Promise<WorkspaceRecord[]> {
  return (await listWorkspaceItems(organisationId)).filter((workspace) => statuses.includes(workspace.status));
}

/**
 * Changes a workspace's name, description or status. Archiving the default workspace, or one that
 * holds active owner keys, is a 409. Undefined when the organisation has no such workspace.
 */
export async function changeWorkspace(
  organisationId: string,
  id: string,
  changes: { name?: string; description?: string | null; status?: WorkspaceStatus; cache?: WorkspaceCacheSettings | null },
): Promise<WorkspaceRecord | undefined> {
  const current = await findWorkspace(organisationId, id);
  if (!current) return undefined;
  if (changes.status === 'archived' && current.is_default) {
    throw new GatewayError(409, `${id} is the organisation's default workspace, where owner keys act; it cannot be archived.`, { code: 'default_workspace' });
  }
  if (changes.status === 'archived' && current.status !== 'archived') await refuseArchivingOwnerKeys(id);
  const now = seconds(Date.now());
  const statusChange =
    changes.status === undefined || changes.status === current.status
      ? {}
      : { status: changes.status, archived_at: changes.status === 'archived' ? now : null };
  return updateWorkspaceItem(
    organisationId,
    id,
    {
      name: changes.name,
      slug: changes.name === undefined ? undefined : slugOf(changes.name),
      description: changes.description,
      cache: changes.cache,
      ...statusChange,
    },
    now,
  );
}

/**
 * An archived workspace's keys stop working, yet its owner keys would still count as the
 * organisation's owners, so revoking the last working one could leave an organisation nobody can
 * manage. A workspace holding active owner keys is therefore not archived until they are revoked.
 */
async function refuseArchivingOwnerKeys(id: string): Promise<void> {
  const owners = (await listAllApiKeyItems(id))
    .filter(({ record }) => record.role === 'owner' && record.revoked_at === undefined)
    .map(({ record }) => record.id);
  if (owners.length === 0) return;
  throw new GatewayError(
    409,
    `${id} holds active owner keys (${owners.slice(0, 5).join(', ')}${owners.length > 5 ? ', …' : ''}), which would stop working while still counting as the organisation's owners. ` +
      'Revoke them first (DELETE /v1/api-keys/{id} with a key of that workspace), then archive it.',
    { param: 'status', code: 'workspace_has_owner_keys' },
  );
}

/**
 * Whether a workspace's keys may be used: false only for an archived one. A workspace the store
 * does not hold (keys written before workspaces were stored) counts as active. Read when a key is
 * looked up, so an archive applies within the key cache's few seconds.
 */
export async function isWorkspaceActive(id: string): Promise<boolean> {
  return (await getWorkspaceItem(id))?.status !== 'archived';
}
