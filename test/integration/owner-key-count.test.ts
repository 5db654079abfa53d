/**
 * The count of an organisation's owner keys against the DynamoDB emulator: started lazily for an
 * organisation stored before owner keys were counted, never high, and never counting a revoked key
 * again. Each test makes an organisation of its own in the shared gateway's store.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateApiKeySecret, hashApiKey, putApiKey, type ApiKeyRecord } from '../../lib/auth/api-keys';
import type { AuthContext } from '../../lib/auth/authenticate';
import { ensureBootstrap } from '../../lib/auth/bootstrap';
import { revokeApiKey } from '../../lib/auth/owner-keys';
import { createWorkspace } from '../../lib/auth/workspaces';
import type { GatewayError } from '../../lib/core/errors';
import { revokeApiKeyItem } from '../../lib/store/api-keys';
import { updateWorkspaceItem } from '../../lib/store/workspaces';
import { countOwnerKey, initialiseOwnerKeyCount, putOrganisation, readBootstrapMarker, readOwnerKeyCount, uncountOwnerKey } from '../../lib/store/organisation';
import { connectToGatewayStore } from '../support/gateway-store';

connectToGatewayStore();

const now = () => Math.floor(Date.now() / 1000);

async function newOrganisation() {
  const id = `org_count_${randomBytes(6).toString('hex')}`;
  await putOrganisation({ id, name: 'Counted', createdAt: now() });
  return id;
}

async function newWorkspace(organisationId: string) {
  return (await createWorkspace({ organisationId, name: 'Counted workspace' })).id;
}

async function newKey(organisationId: string, workspaceId: string, role: 'owner' | 'admin' = 'owner'): Promise<ApiKeyRecord> {
  return putApiKey(generateApiKeySecret(), { name: `${role} key`, role, organisation_id: organisationId, workspace_id: workspaceId });
}

const ownerIn = (key: ApiKeyRecord): AuthContext => ({
  keyId: `key_caller_${key.id}`,
  role: 'owner',
  organisationId: key.organisation_id,
  workspaceId: key.workspace_id,
});

async function statusOfRevocation(key: ApiKeyRecord): Promise<number> {
  try {
    await revokeApiKey(ownerIn(key), key.id);
    return 200;
  } catch (error) {
    return (error as GatewayError).status;
  }
}

describe('the count of owner keys', () => {
  it('starts at the first owner revocation from the active owner keys of the active workspaces, each read again', async () => {
    const org = await newOrganisation();
    const [first, second, archived] = [await newWorkspace(org), await newWorkspace(org), await newWorkspace(org)];
    const revoking = await newKey(org, first);
    const revokedSecret = generateApiKeySecret();
    await putApiKey(revokedSecret, { name: 'revoked owner key', role: 'owner', organisation_id: org, workspace_id: first });
    await revokeApiKeyItem(hashApiKey(revokedSecret), now());
    await newKey(org, first, 'admin');
    const elsewhere = await newKey(org, second);
    const inArchived = await newKey(org, archived);
    // Archived as an earlier version could, with an owner key in it (changeWorkspace refuses that now).
    await updateWorkspaceItem(org, archived, { status: 'archived', archived_at: now() }, now());
    // Keys made before the organisation counted them are not counted when made.
    expect(await readOwnerKeyCount(org)).toBeUndefined();

    await revokeApiKey(ownerIn(revoking), revoking.id);
    const count = await readOwnerKeyCount(org);
    expect([...count!.keyIds]).toEqual([elsewhere.id]);
    expect([...count!.revokedAt.keys()]).toEqual([revoking.id]);

    // The last counted owner key stays.
    await expect(revokeApiKey(ownerIn(elsewhere), elsewhere.id)).rejects.toMatchObject({ status: 409, code: 'last_owner_key' });
    // Counting starts once: a second start is refused by the store.
    expect(await initialiseOwnerKeyCount(org, [revoking.id, elsewhere.id, inArchived.id])).toBe(false);
    expect([...(await readOwnerKeyCount(org))!.keyIds]).toEqual([elsewhere.id]);
  });

  it('counts owner keys made once counting has started, and never a revoked key again', async () => {
    const org = await newOrganisation();
    const workspace = await newWorkspace(org);
    const [a, b] = [await newKey(org, workspace), await newKey(org, workspace)];
    await revokeApiKey(ownerIn(a), a.id);
    const c = await newKey(org, workspace);
    expect([...(await readOwnerKeyCount(org))!.keyIds].sort()).toEqual([b.id, c.id].sort());

    // A creation that reaches the count after the key's revocation was counted leaves the count alone.
    await countOwnerKey(org, a.id);
    await countOwnerKey(org, c.id);
    expect([...(await readOwnerKeyCount(org))!.keyIds].sort()).toEqual([b.id, c.id].sort());
  });

  it('lets only one of two concurrent revocations through when two owner keys are left, starting the count or not', async () => {
    for (let round = 0; round < 4; round++) {
      const org = await newOrganisation();
      const [x, y] = [await newWorkspace(org), await newWorkspace(org)];
      const [a, b] = [await newKey(org, x), await newKey(org, y)];
      if (round % 2 === 1) await initialiseOwnerKeyCount(org, [a.id, b.id]);
      const statuses = await Promise.all([statusOfRevocation(a), statusOfRevocation(b)]);
      expect(statuses.sort(), `round ${round}`).toEqual([200, 409]);
      expect((await readOwnerKeyCount(org))!.keyIds.size).toBe(1);
    }
  });

  it('forgets revocations older than an hour as later ones are counted', async () => {
    const org = await newOrganisation();
    const workspace = await newWorkspace(org);
    const [old, a, b] = [await newKey(org, workspace), await newKey(org, workspace), await newKey(org, workspace)];
    await initialiseOwnerKeyCount(org, [old.id, a.id, b.id]);
    expect(await uncountOwnerKey(org, old.id, now() - 7_200, [])).toBe(true);
    expect([...(await readOwnerKeyCount(org))!.revokedAt.keys()]).toEqual([old.id]);

    await revokeApiKey(ownerIn(a), a.id);
    const count = (await readOwnerKeyCount(org))!;
    expect([...count.revokedAt.keys()]).toEqual([a.id]);
    expect([...count.keyIds]).toEqual([b.id]);
  });

  it('counts the owner key GATEWAY_ADMIN_KEY installs, and one an earlier version installed as an admin once it is promoted', async () => {
    const { organisationId, workspaceId } = (await readBootstrapMarker())!;
    // Starts the shared organisation's count, if no test has yet; its own owner key stays.
    const spare = await newKey(organisationId, workspaceId);
    await revokeApiKey(ownerIn(spare), spare.id);

    const installedKey = `operator-key-${randomBytes(12).toString('hex')}`;
    await ensureBootstrap({ adminKey: installedKey });
    const legacyKey = `legacy-admin-key-${randomBytes(12).toString('hex')}`;
    const legacy = await putApiKey(legacyKey, {
      name: 'Admin key (GATEWAY_ADMIN_KEY)',
      role: 'admin',
      organisation_id: organisationId,
      workspace_id: workspaceId,
    });
    expect((await readOwnerKeyCount(organisationId))!.keyIds.has(legacy.id)).toBe(false);
    await ensureBootstrap({ adminKey: legacyKey });

    const counted = (await readOwnerKeyCount(organisationId))!.keyIds;
    const installed = await putApiKey(
      installedKey,
      { name: 'read back', role: 'member', organisation_id: organisationId, workspace_id: workspaceId },
      { onlyIfAbsent: true },
    );
    expect(installed.role).toBe('owner');
    expect(counted.has(installed.id)).toBe(true);
    expect(counted.has(legacy.id)).toBe(true);
  });
});
