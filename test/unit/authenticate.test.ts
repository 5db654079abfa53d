import { describe, expect, it, vi } from 'vitest';
import { hashApiKey } from '../../lib/auth/api-keys';
import { apiKeyCacheSizes, authenticate } from '../../lib/auth/authenticate';
import { GatewayError } from '../../lib/core/errors';

// vi.mock is hoisted above the imports. The key store stands in for DynamoDB here so that every lookup can be counted; the real store is
// exercised by the integration tests.
const store = vi.hoisted(() => ({ validKeys: new Set<string>(), lookups: new Map<string, number>() }));

vi.mock('../../lib/auth/api-keys', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../lib/auth/api-keys')>();
  return {
    ...actual,
    findApiKeyByHash: async (hash: string) => {
      store.lookups.set(hash, (store.lookups.get(hash) ?? 0) + 1);
      if (![...store.validKeys].some((key) => actual.hashApiKey(key) === hash)) return undefined;
      const record = {
        id: 'key_test',
        name: 'test',
        role: 'member' as const,
        organisation_id: 'org_test',
        workspace_id: 'ws_test',
        hint: 'gwk_…',
        created_at: 0,
      };
      return { record, hash };
    },
  };
});

// Every key here belongs to an active workspace; archiving is covered by the workspaces integration test.
vi.mock('../../lib/auth/workspaces', () => ({ isWorkspaceActive: async () => true }));

const lookupsOf = (key: string) => store.lookups.get(hashApiKey(key)) ?? 0;
const totalLookups = () => [...store.lookups.values()].reduce((sum, count) => sum + count, 0);

async function statusOf(key: string): Promise<number> {
  try {
    await authenticate({ 'x-gateway-api-key': key });
    return 200;
  } catch (error) {
    return (error as GatewayError).status;
  }
}

describe('authenticate', () => {
  it('keeps a valid key cached while thousands of unknown keys are tried', async () => {
    const valid = 'gwk_valid_key_kept_while_junk_floods_in_00001';
    store.validKeys.add(valid);
    expect(await statusOf(valid)).toBe(200);
    for (let i = 0; i < 20_000; i++) expect(await statusOf(`gwk_junk_${i}_${'x'.repeat(200)}`)).toBe(401);
    expect(await statusOf(valid)).toBe(200);
    expect(lookupsOf(valid)).toBe(1);
  });

  it('holds unknown keys as fixed-size digests in a pool of at most 1,000', async () => {
    for (let i = 0; i < 5_000; i++) expect(await statusOf(`gwk_other_junk_${i}_${'y'.repeat(240)}`)).toBe(401);
    const sizes = apiKeyCacheSizes();
    expect(sizes.missing).toBeLessThanOrEqual(1_000);
    const sha256HexLength = 64;
    expect(sizes.keyChars).toBe((sizes.found + sizes.missing + sizes.loading) * sha256HexLength);
  });

  it('refuses a key longer than 256 characters with a 401 that says so, before any lookup', async () => {
    const before = totalLookups();
    const tooLong = `gwk_${'z'.repeat(10_000)}`;
    const error = await authenticate({ 'x-gateway-api-key': tooLong }).catch((caught: GatewayError) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).status).toBe(401);
    expect((error as GatewayError).message).toMatch(/x-gateway-api-key.*10004 characters.*at most 256/);
    expect(await statusOf(`gwk_${'z'.repeat(253)}`)).toBe(401);
    expect(totalLookups()).toBe(before);
    expect(await statusOf(`gwk_${'z'.repeat(252)}`)).toBe(401);
    expect(totalLookups()).toBe(before + 1);
  });

  it('shares one lookup among concurrent requests with the same key', async () => {
    const valid = 'gwk_valid_key_used_by_many_at_once_000000002';
    store.validKeys.add(valid);
    const statuses = await Promise.all(Array.from({ length: 50 }, () => statusOf(valid)));
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(lookupsOf(valid)).toBe(1);
  });
});
