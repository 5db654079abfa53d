/**
 * Semantic cache entries in the shared gateway's state table: the store functions the cache step
 * will call, run in this process against the emulators.
 */
import { randomBytes } from 'node:crypto';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { bestMatch, lshTables, signatures } from '../../lib/core/semantic-index';
import { newId } from '../../lib/core/ids';
import { dynamoClient, resetClients } from '../../lib/store/clients';
import { putCacheEntry } from '../../lib/store/cache-entries';
import {
  deleteSemanticItems,
  findSemanticCandidates,
  findSemanticCandidatesWithReads,
  isSemanticRef,
  putSemanticEntry,
  semanticRefOf,
  type SemanticEntry,
} from '../../lib/store/semantic-entries';
import { connectToGatewayStore, stateTable } from '../support/gateway-store';
import { seededNormals } from '../support/seeded-normals';
import { nearDuplicate as nearDuplicateOf, randomUnit as randomUnitOf } from '../support/vectors';

const day = 86_400_000;
const dimensions = 1536;

connectToGatewayStore();
beforeAll(() => {
  process.env.GATEWAY_STATE_TABLE = stateTable;
  resetClients();
});

const unique = () => randomBytes(6).toString('hex');
const newWorkspaceId = () => `ws_sem${unique()}`;
const newScope = () => randomBytes(16).toString('hex');

const random = seededNormals(4242);
const randomUnit = () => randomUnitOf(dimensions, random);
const nearDuplicate = (original: Float32Array, similarity: number) => nearDuplicateOf(original, similarity, random);

function entry(vector: Float32Array, overrides: Partial<SemanticEntry> = {}): SemanticEntry {
  return { id: newId('sem'), vector, answerRef: { partition: 'default', key: randomBytes(32).toString('hex') }, expiresAt: Date.now() + day, ...overrides };
}

/** Stores `count` entries of unrelated vectors in a scope. */
async function fill(workspaceId: string, scope: string, count: number): Promise<SemanticEntry[]> {
  const entries = Array.from({ length: count }, () => entry(randomUnit()));
  await Promise.all(entries.map((stored) => putSemanticEntry(workspaceId, scope, stored)));
  return entries;
}

describe('semantic cache entries', () => {
  it('finds the entry of a near-duplicate query among others of its scope, and none for an unrelated one', async () => {
    const [workspaceId, scope] = [newWorkspaceId(), newScope()];
    const entries = await fill(workspaceId, scope, 40);
    const target = entries[17]!;

    const query = nearDuplicate(target.vector as Float32Array, 0.97);
    const candidates = await findSemanticCandidates(workspaceId, scope, signatures(query));
    expect(candidates.map(({ id }) => id)).toContain(target.id);
    expect(new Set(candidates.map(({ id }) => id)).size).toBe(candidates.length);
    const match = bestMatch(query, candidates, 0.95);
    expect(match?.candidate).toEqual({ id: target.id, vector: target.vector, answerRef: target.answerRef, expiresAt: target.expiresAt });
    expect(match?.similarity).toBeCloseTo(0.97, 4);

    const unrelated = randomUnit();
    const others = await findSemanticCandidates(workspaceId, scope, signatures(unrelated));
    expect(others.length).toBeLessThan(5);
    expect(bestMatch(unrelated, others, 0.95)).toBeUndefined();
  });

  it('stores one item per LSH table under its bucket, with a TTL in seconds', async () => {
    const [workspaceId, scope] = [newWorkspaceId(), newScope()];
    const stored = entry(randomUnit());
    await putSemanticEntry(workspaceId, scope, stored);
    const buckets = signatures(stored.vector);
    expect(buckets).toHaveLength(lshTables);
    for (const [table, signature] of buckets.entries()) {
      const { Item } = await dynamoClient().send(
        new GetItemCommand({
          TableName: stateTable,
          Key: marshall({ pk: `SEMCACHE#${workspaceId}#${scope}#${table}#${signature}`, sk: stored.id }),
          ConsistentRead: true,
        }),
      );
      const item = unmarshall(Item!);
      expect(item).toMatchObject({
        answerPartition: 'default',
        answerKey: stored.answerRef.key,
        expiresAtMs: stored.expiresAt,
        expiresAt: Math.ceil(stored.expiresAt / 1000),
      });
      // Float32 base64: 4 bytes a component, the whole item well under DynamoDB's 400 KB.
      expect(Buffer.from(item.vector, 'base64')).toHaveLength(dimensions * 4);
    }
  });

  it('never shows an entry to another scope or another workspace', async () => {
    const [workspaceId, scope] = [newWorkspaceId(), newScope()];
    const [stored] = await fill(workspaceId, scope, 1);
    const sameVector = signatures(stored!.vector);
    expect((await findSemanticCandidates(workspaceId, scope, sameVector)).map(({ id }) => id)).toEqual([stored!.id]);
    expect(await findSemanticCandidates(workspaceId, newScope(), sameVector)).toEqual([]);
    expect(await findSemanticCandidates(newWorkspaceId(), scope, sameVector)).toEqual([]);
  });

  it('drops an entry once its expiry has passed, before TTL deletes it', async () => {
    const [workspaceId, scope] = [newWorkspaceId(), newScope()];
    const live = entry(randomUnit());
    const expired = entry(nearDuplicate(live.vector as Float32Array, 0.999), { expiresAt: Date.now() - 1 });
    await putSemanticEntry(workspaceId, scope, live);
    await putSemanticEntry(workspaceId, scope, expired);
    const query = signatures(live.vector);
    expect((await findSemanticCandidates(workspaceId, scope, query)).map(({ id }) => id)).toEqual([live.id]);
    expect(await findSemanticCandidates(workspaceId, scope, query, { now: live.expiresAt })).toEqual([]);
  });

  it('reads at most perBucketLimit items a bucket, the newest, however full the bucket', async () => {
    const [workspaceId, scope] = [newWorkspaceId(), newScope()];
    const vector = randomUnit();
    const start = Date.now();
    // One vector for all: every entry lands in the same bucket of every table.
    const entries = Array.from({ length: 30 }, (_, i) => entry(vector, { id: newId('sem', start + i) }));
    await Promise.all(entries.map((stored) => putSemanticEntry(workspaceId, scope, stored)));

    const { candidates, itemsRead } = await findSemanticCandidatesWithReads(workspaceId, scope, signatures(vector), { perBucketLimit: 5 });
    expect(candidates.map(({ id }) => id).sort()).toEqual(
      entries
        .slice(-5)
        .map(({ id }) => id)
        .sort(),
    );
    // Every table's Query reads the same five entries: paid for ten times, compared once.
    expect(itemsRead).toBe(5 * lshTables);
    expect((await findSemanticCandidates(workspaceId, scope, signatures(vector))).length).toBe(16);
  });

  it('refuses key parts that could reach into another key, and signatures of another scheme', async () => {
    const stored = entry(randomUnit());
    await expect(putSemanticEntry('ws#other', newScope(), stored)).rejects.toThrow(/key part/);
    await expect(putSemanticEntry(newWorkspaceId(), 'scope#0', stored)).rejects.toThrow(/key part/);
    await expect(findSemanticCandidates(newWorkspaceId(), newScope(), ['abc'])).rejects.toThrow(/signatures/);
    await expect(findSemanticCandidates(newWorkspaceId(), newScope(), signatures(stored.vector), { perBucketLimit: 0 })).rejects.toThrow(/perBucketLimit/);
  });

  it('deletes an entry by the ref its answer keeps, and names the ref an overwritten answer had', async () => {
    const [workspaceId, scope] = [newWorkspaceId(), newScope()];
    const [kept] = await fill(workspaceId, scope, 1);
    const stored = entry(randomUnit());
    const ref = semanticRefOf(scope, stored.id, stored.vector);
    expect(isSemanticRef(ref)).toBe(true);
    expect(isSemanticRef({ ...ref, signatures: ref.signatures.slice(1) })).toBe(false);
    expect(isSemanticRef({ ...ref, scope: 'a#b' })).toBe(false);
    await putSemanticEntry(workspaceId, scope, stored);
    expect((await findSemanticCandidates(workspaceId, scope, ref.signatures)).map(({ id }) => id)).toEqual([stored.id]);

    const answer = (text: string, semanticRef?: typeof ref) => ({
      body: Buffer.from(text),
      status: 200,
      headers: {},
      createdAt: Date.now(),
      expiresAt: Date.now() + day,
      semanticRef,
    });
    expect(await putCacheEntry(workspaceId, 'p', 'k', answer('first', ref))).toBeUndefined();
    expect(await putCacheEntry(workspaceId, 'p', 'k', answer('same ref again', ref))).toBeUndefined();
    expect(await putCacheEntry(workspaceId, 'p', 'k', answer('no ref'))).toEqual(ref);

    await deleteSemanticItems(workspaceId, [ref]);
    expect(await findSemanticCandidates(workspaceId, scope, ref.signatures)).toEqual([]);
    expect((await findSemanticCandidates(workspaceId, scope, signatures(kept!.vector))).map(({ id }) => id)).toEqual([kept!.id]);
  });
});
