import { newId } from '../core/ids';
import { countOwnerKey, putBootstrapMarkerIfAbsent, putOrganisation, readBootstrapMarker } from '../store/organisation';
import { promoteApiKeyToOwner } from '../store/api-keys';
import { upgradeDefaultWorkspaceItem } from '../store/workspaces';
import { generateApiKeySecret, hashApiKey, maxApiKeyLength, putApiKey } from './api-keys';
import { createWorkspace } from './workspaces';

export interface BootstrapResult {
  organisationId: string;
  workspaceId: string;
  /** Set only when this call created the first owner key; print it once. */
  createdAdminKey?: string;
  /** Set when `adminKey` names a key that was revoked; it stays revoked, and the operator must hear why it fails. */
  revokedAdminKey?: { id: string; revokedAt: number };
}

const minAdminKeyLength = 20;

/**
 * Makes sure the organisation, its default workspace and an owner key exist. The first call creates
 * them and returns the new key; later calls change nothing (but bring a default workspace of an
 * older version up to date). With `adminKey`, that key is installed (idempotently) as an owner
 * instead of a generated one. Used by the local first start and by `npm run bootstrap` against a
 * deployed stack.
 */
export async function ensureBootstrap(options: { adminKey?: string } = {}): Promise<BootstrapResult> {
  if (options.adminKey !== undefined && (options.adminKey.length < minAdminKeyLength || options.adminKey.length > maxApiKeyLength)) {
    throw new Error(`GATEWAY_ADMIN_KEY must be ${minAdminKeyLength} to ${maxApiKeyLength} characters long.`);
  }
  const existing = await readBootstrapMarker();
  let result: BootstrapResult;
  let created = false;
  if (existing) {
    result = existing;
  } else {
    const organisationId = newId('org');
    const workspaceId = newId('ws');
    const now = Math.floor(Date.now() / 1000);
    await putOrganisation({ id: organisationId, name: 'Default organisation', createdAt: now });
    await createWorkspace({ id: workspaceId, organisationId, name: 'Default workspace', slug: 'default', isDefault: true, now });
    if (await putBootstrapMarkerIfAbsent({ organisationId, workspaceId }, now)) {
      result = { organisationId, workspaceId };
      created = true;
    } else {
      result = (await readBootstrapMarker())!; // another process bootstrapped first
    }
  }
  if (!created) await upgradeDefaultWorkspaceItem(result.organisationId, result.workspaceId);
  const scope = { organisation_id: result.organisationId, workspace_id: result.workspaceId, role: 'owner' as const };
  if (options.adminKey) {
    // Installing is idempotent and never undoes a revocation: a restart must not bring a revoked key back.
    const installed = await putApiKey(options.adminKey, { name: 'Owner key (GATEWAY_ADMIN_KEY)', ...scope }, { onlyIfAbsent: true });
    if (installed.revoked_at !== undefined) result.revokedAdminKey = { id: installed.id, revokedAt: installed.revoked_at };
    // Installed by a version without owners: the operator's key is the organisation's owner.
    else if (installed.role !== 'owner' && (await promoteApiKeyToOwner(hashApiKey(options.adminKey)))) {
      await countOwnerKey(result.organisationId, installed.id);
    }
  } else if (created) {
    const secret = generateApiKeySecret();
    await putApiKey(secret, { name: 'First owner key', ...scope });
    result.createdAdminKey = secret;
  }
  return result;
}

/** The start-up warning for a revoked GATEWAY_ADMIN_KEY: what happened and how to get an owner key again. */
export function revokedAdminKeyWarning(key: { id: string; revokedAt: number }): string {
  const revokedAt = new Date(key.revokedAt * 1000).toISOString();
  return (
    `Warning: GATEWAY_ADMIN_KEY is the owner key ${key.id}, which was revoked at ${revokedAt}. ` +
    `A revoked key stays revoked: it was not installed again, and requests with it get 401. ` +
    `To install a new owner key, set GATEWAY_ADMIN_KEY to a new value (${minAdminKeyLength} to ${maxApiKeyLength} characters) and start again.`
  );
}
