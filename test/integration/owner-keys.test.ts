/**
 * The organisation keeps an owner key: a gateway of its own (its own emulators, so its organisation
 * has only the owner keys made here), where the last owner key cannot be revoked, not even by two
 * owners revoking each other at the same moment.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnGateway, type SpawnedGateway } from '../support/spawn-gateway';

let gateway: SpawnedGateway;
let dataDir: string;
let firstKey: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'gateway-owner-keys-'));
  gateway = await spawnGateway({
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_KEY: undefined,
    GATEWAY_DYNAMODB_ENDPOINT: undefined,
    GATEWAY_SQS_ENDPOINT: undefined,
    GATEWAY_S3_ENDPOINT: undefined,
  });
  firstKey = /Owner API key \(shown once; store it now\): (gwk_\S+)/.exec(gateway.output())![1]!;
});

afterAll(async () => {
  await gateway?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function call(key: string, method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${gateway.url}${urlPath}`, {
    method,
    headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function createOwnerKey(by: string, name: string): Promise<{ id: string; key: string }> {
  const created = await call(by, 'POST', '/api-keys', { name, role: 'owner' });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body;
}

async function keyIdOf(key: string): Promise<string> {
  const listed = await call(key, 'GET', '/api-keys?limit=100');
  return listed.body.data.find((entry: any) => entry.name === 'First owner key').id;
}

async function activeOwnerIds(key: string): Promise<string[]> {
  const listed = await call(key, 'GET', '/api-keys?limit=100');
  return listed.body.data.filter((entry: any) => entry.role === 'owner' && entry.status === 'active').map((entry: any) => entry.id);
}

describe('the last owner key', () => {
  it('cannot be revoked (409 saying why and what to do); with a second owner it can, and the second is then the last', async () => {
    const firstId = await keyIdOf(firstKey);
    // The first start's organisation has no count of owner keys yet: this revocation starts it.
    const refused = await call(firstKey, 'DELETE', `/api-keys/${firstId}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ type: 'conflict_error', code: 'last_owner_key' });
    expect(refused.body.error.message).toContain(`${firstId} is the organisation's last active owner key`);
    expect(refused.body.error.message).toContain('Create another owner key first');
    expect(await activeOwnerIds(firstKey)).toEqual([firstId]);

    const second = await createOwnerKey(firstKey, 'second owner');
    const revoked = await call(second.key, 'DELETE', `/api-keys/${firstId}`);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body).toMatchObject({ id: firstId, deleted: true });
    // Revoking it again answers as before and does not count it a second time.
    const again = await call(second.key, 'DELETE', `/api-keys/${firstId}`);
    expect(again.status).toBe(200);
    expect(again.body.revoked_at).toBe(revoked.body.revoked_at);

    const last = await call(second.key, 'DELETE', `/api-keys/${second.id}`);
    expect(last.status).toBe(409);
    expect(last.body.error.code).toBe('last_owner_key');
    expect(await activeOwnerIds(second.key)).toEqual([second.id]);
    firstKey = second.key;
  });

  it('stays with exactly one of two owners that revoke each other at the same time, every time', async () => {
    let survivor = firstKey;
    for (let round = 0; round < 6; round++) {
      const other = await createOwnerKey(survivor, `round ${round}`);
      const owners = await activeOwnerIds(survivor);
      expect(owners).toHaveLength(2);
      const survivorId = owners.find((id) => id !== other.id)!;
      const [byOther, bySurvivor] = await Promise.all([
        call(other.key, 'DELETE', `/api-keys/${survivorId}`),
        call(survivor, 'DELETE', `/api-keys/${other.id}`),
      ]);
      expect([byOther.status, bySurvivor.status].sort(), `round ${round}`).toEqual([200, 409]);
      const [winner, winnerId] = byOther.status === 200 ? [other.key, other.id] : [survivor, survivorId];
      expect(await activeOwnerIds(winner), `round ${round}`).toEqual([winnerId]);
      survivor = winner;
    }
  }, 60_000);
});
