import { GatewayError } from '../core/errors';
import { findApiKeyHashInWorkspace, getApiKeyItem, listAllApiKeyItems, revokeApiKeyItem, type ApiKeyRecord } from '../store/api-keys';
import { initialiseOwnerKeyCount, readOwnerKeyCount, uncountOwnerKey, type OwnerKeyCount } from '../store/organisation';
import { requireOwner, type AuthContext } from './authenticate';
import { listWorkspaces } from './workspaces';

/**
 * How long a counted revocation is remembered. It only has to outlive a creation of that key still
 * on its way to the count, and no request runs longer than a Lambda function may (15 minutes).
 */
const revocationMemorySeconds = 3_600;
/** Old revocation records dropped per revocation, so the write stays small. */
const forgottenPerRevocation = 25;

const seconds = (ms: number) => Math.floor(ms / 1000);

/**
 * Revokes a key of the caller's workspace; undefined when it has no key with that id. Only owners
 * revoke owner keys, and never the organisation's last counted one (409). A key revoked already is
 * answered as it is, with its first revocation time.
 */
export async function revokeApiKey(caller: AuthContext, keyId: string): Promise<ApiKeyRecord | undefined> {
  const hash = await findApiKeyHashInWorkspace(caller.workspaceId, keyId);
  const found = hash === undefined ? undefined : await getApiKeyItem(hash);
  if (!found) return undefined;
  const key = found.record;
  if (key.role === 'owner') requireOwner(caller, 'revoke an owner key');
  if (key.revoked_at !== undefined) return key;
  const now = seconds(Date.now());
  // Counted before the key is marked: a crash in between leaves an active key uncounted, which can only refuse a later revocation, never allow one too many.
  if (key.role === 'owner') await uncountRevokedOwnerKey(key, now);
  return revokeApiKeyItem(found.storedHash, now);
}

async function uncountRevokedOwnerKey(key: ApiKeyRecord, now: number): Promise<void> {
  const count = (await readOwnerKeyCount(key.organisation_id)) ?? (await startOwnerKeyCount(key));
  const forget = [...(count?.revokedAt ?? [])]
    .filter(([id, revokedAt]) => id !== key.id && revokedAt < now - revocationMemorySeconds)
    .slice(0, forgottenPerRevocation)
    .map(([id]) => id);
  if (!(await uncountOwnerKey(key.organisation_id, key.id, now, forget))) {
    throw new GatewayError(
      409,
      `${key.id} is the organisation's last active owner key, and without one nobody could manage its workspaces or owner keys again. ` +
        'Create another owner key first (POST /v1/api-keys {"name": "…", "role": "owner"}), then revoke this one.',
      { code: 'last_owner_key' },
    );
  }
}

/**
 * Starts the count of an organisation stored before owner keys were counted, from the owner keys
 * of its workspaces, each confirmed by a consistent read of its item. A key the listing has not
 * caught up with yet is left out, and so are keys of archived workspaces (they work again only if
 * an owner makes the workspace active): the count may be low, never high. When another process
 * starts it at the same time, the first write stands.
 */
async function startOwnerKeyCount(revoking: ApiKeyRecord): Promise<OwnerKeyCount | undefined> {
  const active = await activeOwnerKeyIds(revoking.organisation_id);
  active.add(revoking.id);
  await initialiseOwnerKeyCount(revoking.organisation_id, [...active]);
  return readOwnerKeyCount(revoking.organisation_id);
}

/** Ids of the organisation's owner keys that are not revoked, in its active workspaces. */
async function activeOwnerKeyIds(organisationId: string): Promise<Set<string>> {
  const workspaces = await listWorkspaces(organisationId, ['active']);
  const listed = (await Promise.all(workspaces.map((workspace) => listAllApiKeyItems(workspace.id)))).flat();
  const candidates = listed.filter(({ record }) => isActiveOwnerOf(organisationId, record));
  const confirmed = await Promise.all(candidates.map(async ({ hash }) => (await getApiKeyItem(hash))?.record));
  return new Set(confirmed.filter((record) => record !== undefined && isActiveOwnerOf(organisationId, record)).map((record) => record!.id));
}

function isActiveOwnerOf(organisationId: string, record: ApiKeyRecord): boolean {
  return record.role === 'owner' && record.revoked_at === undefined && record.organisation_id === organisationId;
}
