/**
 * Cached answers in the shared gateway's state table and bucket: the store functions the cache
 * step calls, run in this process against the emulators, and `DELETE /v1/cache` over HTTP.
 */
import { createHash, randomBytes } from 'node:crypto';
import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { namespacePartition } from '../../lib/cache/cache-key';
import { getCacheEntry, purgeCacheEntries, putCacheEntry, type CacheEntry } from '../../lib/store/cache-entries';
import { dynamoClient, resetClients, s3Client } from '../../lib/store/clients';
import { env, gatewayFetch, type TestResponse } from '../support/gateway-client';
import { connectToGatewayStore, stateTable } from '../support/gateway-store';

/** serverless.yml's DataBucket (`${self:service}-${sls:stage}-${AWS::AccountId}-data`) as the local runtime names it. */
const bucket = 'llm-gateway-local-000000000000-data';
const day = 86_400_000;

const store = connectToGatewayStore();
beforeAll(() => {
  Object.assign(process.env, { GATEWAY_STATE_TABLE: stateTable, GATEWAY_S3_ENDPOINT: env().endpoints.s3, GATEWAY_BUCKET: bucket });
  resetClients();
});

const unique = () => randomBytes(6).toString('hex');
const newWorkspaceId = () => `ws_cache${unique()}`;
const newKey = () => createHash('sha256').update(randomBytes(16)).digest('hex');

function answer(text: string, overrides: Partial<CacheEntry> = {}): CacheEntry {
  const body = Buffer.from(
    JSON.stringify({
      id: `chatcmpl-${unique()}`,
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    }),
  );
  const createdAt = Date.now();
  return { body, status: 200, headers: {}, createdAt, expiresAt: createdAt + day, ...overrides };
}

/** An answer of about 400 KB, multi-byte characters included, so no item could hold it. */
function largeAnswer(): CacheEntry {
  return answer(`ünïcødé ${randomBytes(150_000).toString('base64')} ✓`.repeat(2));
}

async function storedItem(workspaceId: string, partition: string, key: string): Promise<Record<string, any> | undefined> {
  const { Item } = await dynamoClient().send(
    new GetItemCommand({ TableName: stateTable, Key: marshall({ pk: `CACHE#${workspaceId}`, sk: `${partition}#${key}` }), ConsistentRead: true }),
  );
  return Item ? unmarshall(Item) : undefined;
}

/** Moves an entry's stored expiry to a moment ago, as if its max_age had passed. */
async function expire(workspaceId: string, partition: string, key: string): Promise<void> {
  await dynamoClient().send(
    new UpdateItemCommand({
      TableName: stateTable,
      Key: marshall({ pk: `CACHE#${workspaceId}`, sk: `${partition}#${key}` }),
      UpdateExpression: 'SET expiresAtMs = :past',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: marshall({ ':past': Date.now() - 1 }),
    }),
  );
}

async function objectExists(objectKey: string): Promise<boolean> {
  try {
    await s3Client().send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey }));
    return true;
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
    throw error;
  }
}

/** Stores `count` small answers in a partition; returns their keys. */
async function fill(workspaceId: string, partition: string, count: number): Promise<string[]> {
  const keys = Array.from({ length: count }, newKey);
  for (let offset = 0; offset < keys.length; offset += 50) {
    await Promise.all(keys.slice(offset, offset + 50).map((key) => putCacheEntry(workspaceId, partition, key, answer(key))));
  }
  return keys;
}

describe('cache entries', () => {
  it('round-trips a small answer inside its item, with a TTL in seconds', async () => {
    const [workspaceId, partition, key] = [newWorkspaceId(), namespacePartition('small'), newKey()];
    const entry = answer('hello', {
      status: 200,
      headers: { 'x-request-id': 'req_123', 'openai-processing-ms': '42' },
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    });
    await putCacheEntry(workspaceId, partition, key, entry);

    expect(await getCacheEntry(workspaceId, partition, key)).toEqual(entry);
    const item = await storedItem(workspaceId, partition, key);
    expect(Buffer.from(item!.body).equals(entry.body)).toBe(true);
    expect(item!.bodyObject).toBeUndefined();
    expect(item!.expiresAt).toBe(Math.ceil(entry.expiresAt / 1000));
    expect(item!.expiresAtMs).toBe(entry.expiresAt);

    // A forced refresh overwrites.
    const refreshed = answer('hello again');
    await putCacheEntry(workspaceId, partition, key, refreshed);
    expect(await getCacheEntry(workspaceId, partition, key)).toEqual(refreshed);
    expect((await getCacheEntry(workspaceId, partition, key))!.usage).toBeUndefined();
  });

  it('keeps a body above 350 KB in S3 and gives it back byte for byte', async () => {
    const [workspaceId, partition, key] = [newWorkspaceId(), namespacePartition('large'), newKey()];
    const entry = { ...largeAnswer(), headers: { 'x-request-id': 'req_large' } };
    expect(entry.body.length).toBeGreaterThan(350 * 1024);
    await putCacheEntry(workspaceId, partition, key, entry);

    const item = await storedItem(workspaceId, partition, key);
    expect(item!.body).toBeUndefined();
    expect(item!.bodyObject).toBe(`cache/${workspaceId}/${partition}/${key}`);
    expect(JSON.stringify(item).length).toBeLessThan(1_000);
    const object = await s3Client().send(new GetObjectCommand({ Bucket: bucket, Key: item!.bodyObject }));
    expect(object.Metadata?.['expires-at']).toBe(String(entry.expiresAt));
    await object.Body!.transformToByteArray();

    const found = await getCacheEntry(workspaceId, partition, key);
    expect(found!.body.equals(entry.body)).toBe(true);
    expect(found).toEqual(entry);

    // Refreshed by a larger answer, and by a small one: each read gives the latest.
    const larger = largeAnswer();
    await putCacheEntry(workspaceId, partition, key, larger);
    expect((await getCacheEntry(workspaceId, partition, key))!.body.equals(larger.body)).toBe(true);
    const small = answer('short now');
    await putCacheEntry(workspaceId, partition, key, small);
    expect(await getCacheEntry(workspaceId, partition, key)).toEqual(small);
  });

  it('misses an entry once its expiry has passed, before TTL deletes it', async () => {
    const workspaceId = newWorkspaceId();
    const partition = namespacePartition('expiry');
    const [small, large] = [newKey(), newKey()];
    await putCacheEntry(workspaceId, partition, small, answer('soon stale'));
    await putCacheEntry(workspaceId, partition, large, largeAnswer());
    expect(await getCacheEntry(workspaceId, partition, small)).toBeDefined();
    expect(await getCacheEntry(workspaceId, partition, large)).toBeDefined();

    await expire(workspaceId, partition, small);
    await expire(workspaceId, partition, large);
    expect(await storedItem(workspaceId, partition, small)).toBeDefined();
    expect(await getCacheEntry(workspaceId, partition, small)).toBeUndefined();
    expect(await getCacheEntry(workspaceId, partition, large)).toBeUndefined();
  });

  it('misses an entry whose S3 body is gone, and one never stored', async () => {
    const [workspaceId, partition, key] = [newWorkspaceId(), namespacePartition('gone'), newKey()];
    await putCacheEntry(workspaceId, partition, key, largeAnswer());
    await s3Client().send(new DeleteObjectCommand({ Bucket: bucket, Key: `cache/${workspaceId}/${partition}/${key}` }));
    expect(await getCacheEntry(workspaceId, partition, key)).toBeUndefined();
    expect(await getCacheEntry(workspaceId, partition, newKey())).toBeUndefined();
  });

  it('purges one namespace with its S3 bodies, and leaves the other namespaces', async () => {
    const workspaceId = newWorkspaceId();
    const [purged, kept] = [namespacePartition(`support-${unique()}`), namespacePartition(`sales-${unique()}`)];
    const purgedKeys = await fill(workspaceId, purged, 2);
    const largeKey = newKey();
    await putCacheEntry(workspaceId, purged, largeKey, largeAnswer());
    const keptKeys = await fill(workspaceId, kept, 2);

    expect(await purgeCacheEntries(workspaceId, purged)).toBe(3);
    for (const key of [...purgedKeys, largeKey]) expect(await getCacheEntry(workspaceId, purged, key)).toBeUndefined();
    expect(await objectExists(`cache/${workspaceId}/${purged}/${largeKey}`)).toBe(false);
    for (const key of keptKeys) expect(await getCacheEntry(workspaceId, kept, key)).toBeDefined();
    expect(await purgeCacheEntries(workspaceId, purged)).toBe(0);
  });

  it('purges a workspace and leaves other workspaces', async () => {
    const [mine, theirs] = [newWorkspaceId(), newWorkspaceId()];
    const partition = namespacePartition('shared-name');
    const [mineKeys, theirKeys] = [await fill(mine, partition, 3), await fill(theirs, partition, 2)];
    await fill(mine, namespacePartition('other'), 1);

    expect(await purgeCacheEntries(mine)).toBe(4);
    expect(await getCacheEntry(mine, partition, mineKeys[0]!)).toBeUndefined();
    for (const key of theirKeys) expect(await getCacheEntry(theirs, partition, key)).toBeDefined();
    expect(await purgeCacheEntries(mine)).toBe(0);
  });

  it('purges more entries than one page of the table holds', async () => {
    const workspaceId = newWorkspaceId();
    const [first, second] = [namespacePartition('page-one'), namespacePartition('page-two')];
    await fill(workspaceId, first, 1_010);
    await fill(workspaceId, second, 20);
    expect(await purgeCacheEntries(workspaceId, first)).toBe(1_010);
    expect(await purgeCacheEntries(workspaceId)).toBe(20);
  }, 60_000);
});

describe('DELETE /v1/cache', () => {
  const json = { 'content-type': 'application/json' };
  const as = (key: string | undefined, method: string, path: string, body?: unknown): Promise<TestResponse> =>
    gatewayFetch(path, {
      method,
      headers: { ...json, ...(key ? { 'x-gateway-api-key': key } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  async function answered(response: Promise<TestResponse>, status: number): Promise<any> {
    const got = await response;
    const body = await got.json();
    expect(got.status, JSON.stringify(body)).toBe(status);
    return body;
  }

  /** A workspace made through the API, with an admin and a member key (the owner key acts in the default workspace). */
  async function team() {
    const workspace = await answered(as(undefined, 'POST', '/workspaces', { name: `Cache ${unique()}` }), 200);
    const key = async (role: string) =>
      (await answered(as(undefined, 'POST', '/api-keys', { name: `${role} cache`, role, workspace_id: workspace.id }), 200)).key as string;
    return { id: workspace.id as string, admin: await key('admin'), member: await key('member') };
  }

  it('is for admins: a member key gets 403 and deletes nothing', async () => {
    const { id, member } = await team();
    const [key] = await fill(id, namespacePartition('kept'), 1);
    const body = await answered(as(member, 'DELETE', '/cache'), 403);
    expect(body.error.code).toBe('admin_required');
    expect(await getCacheEntry(id, namespacePartition('kept'), key!)).toBeDefined();
  });

  it('deletes one namespace’s entries, then all of the workspace, and says how many', async () => {
    const { id, admin } = await team();
    const namespace = 'support bot/α & β';
    await fill(id, namespacePartition(namespace), 2);
    const [otherKey] = await fill(id, namespacePartition('other'), 1);
    await fill(id, 'md-0123456789abcdef0123456789abcdef', 1);

    expect(await answered(as(admin, 'DELETE', `/cache?namespace=${encodeURIComponent(namespace)}`), 200)).toEqual({
      object: 'cache.purge',
      deleted: 2,
      namespace,
    });
    expect(await getCacheEntry(id, namespacePartition('other'), otherKey!)).toBeDefined();
    expect(await answered(as(admin, 'DELETE', '/cache'), 200)).toEqual({ object: 'cache.purge', deleted: 2, namespace: null });
    expect(await answered(as(admin, 'DELETE', '/cache'), 200)).toMatchObject({ deleted: 0 });
  });

  it('never reaches another workspace’s entries', async () => {
    const { admin } = await team();
    // The owner's (default) workspace is shared by other test files: only a namespace of this test's own.
    const namespace = `owner-only-${unique()}`;
    const [key] = await fill(store.workspaceId, namespacePartition(namespace), 1);

    expect(await answered(as(admin, 'DELETE', `/cache?namespace=${namespace}`), 200)).toMatchObject({ deleted: 0 });
    expect(await answered(as(admin, 'DELETE', '/cache'), 200)).toMatchObject({ deleted: 0 });
    expect(await getCacheEntry(store.workspaceId, namespacePartition(namespace), key!)).toBeDefined();
    expect(await answered(as(undefined, 'DELETE', `/cache?namespace=${namespace}`), 200)).toEqual({ object: 'cache.purge', deleted: 1, namespace });
  });

  it('refuses a namespace that is empty or above 1,000 characters', async () => {
    for (const namespace of ['', 'n'.repeat(1_001)]) {
      const body = await answered(as(undefined, 'DELETE', `/cache?namespace=${namespace}`), 400);
      expect(body.error).toMatchObject({ param: 'namespace', code: 'invalid_query' });
    }
    expect(await answered(as(undefined, 'DELETE', `/cache?namespace=${'n'.repeat(1_000)}`), 200)).toMatchObject({ deleted: 0 });
  });
});
