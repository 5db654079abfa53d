import { PutItemCommand, QueryCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteObjectsCommand, type ObjectIdentifier } from '@aws-sdk/client-s3';
import type { TokenUsage } from '../core/usage';
import { writeInBatches } from './batch-write';
import { dynamoClient, s3Client } from './clients';
import { getItemFast } from './lean-dynamo';
import { cacheEntryKey } from './keys';
import { getObject, putObject } from './s3-object';
import { deleteSemanticItems, isSemanticRef, type SemanticRef } from './semantic-entries';
import { dataBucket, tables } from './tables';

/** A cached answer, as the cache step replays it. */
export interface CacheEntry {
  /** The complete OpenAI-format answer JSON. */
  body: Buffer;
  status: number;
  /** The few provider headers replayed with the answer; may be empty. */
  headers: Record<string, string>;
  usage?: TokenUsage;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms, absolute: the entry is a miss from then on, whenever TTL gets round to deleting it. */
  expiresAt: number;
  /** The semantic entry that answers with this one, if one was stored (read by the purge, not by hits). */
  semanticRef?: SemanticRef;
}

/** An item stops at 400 KB; this leaves room for the rest of the entry beside the body. */
const inlineBodyLimit = 350 * 1024;

/** Items per purge page: bounds what one page holds, and DeleteObjects takes at most 1,000 keys. */
const purgePageSize = 1000;

/** The object metadata naming the item a body was written with (by its expiry). */
const expiryMetadata = 'expires-at';

/** Workspace ids, partitions and keys are safe in a sort-key prefix (no `#`) and as object path segments (no `/` or `.`). */
const keyPartPattern = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * The entry stored for a request key in a partition of a workspace: one GetItem, plus one S3 read
 * for a large body. An expired entry is a miss, and so is one whose body object is gone. The read
 * is on every first-level miss, so it skips the SDK (lean-dynamo.ts).
 */
export async function getCacheEntry(workspaceId: string, partition: string, key: string, now = Date.now()): Promise<CacheEntry | undefined> {
  checkKeyParts(workspaceId, partition, key);
  const item = await getItemFast(tables.state, itemKey(workspaceId, partition, key));
  if (!item) return undefined;
  const expiresAt = Number(item.expiresAtMs?.N);
  // NaN (an item without the attribute) compares false, so it is a miss too.
  if (!(expiresAt > now)) return undefined;
  const body = item.body?.B ? asBuffer(item.body.B) : item.bodyObject?.S ? await readBodyObject(item.bodyObject.S, expiresAt) : undefined;
  if (!body) return undefined;
  const entry: CacheEntry = {
    body,
    status: Number(item.status?.N),
    headers: JSON.parse(item.headers?.S ?? '{}'),
    createdAt: Number(item.createdAt?.N),
    expiresAt,
  };
  if (item.usage?.S) entry.usage = JSON.parse(item.usage.S);
  return entry;
}

/**
 * Stores an entry, replacing any entry of the key (a forced refresh, an expired one). A body above
 * ~350 KB goes to S3 first and the item points to it, so no item ever points to a body not yet
 * written. Only the entry's own fields are stored, one by one. Answers with the semantic entry of
 * the entry it replaced, when that is not the new entry's own: nothing else points to it any more,
 * so the caller deletes it.
 */
export async function putCacheEntry(workspaceId: string, partition: string, key: string, entry: CacheEntry): Promise<SemanticRef | undefined> {
  checkKeyParts(workspaceId, partition, key);
  const item: Record<string, AttributeValue> = {
    ...itemKey(workspaceId, partition, key),
    status: { N: String(entry.status) },
    headers: { S: JSON.stringify(entry.headers) },
    createdAt: { N: String(entry.createdAt) },
    expiresAtMs: { N: String(entry.expiresAt) },
    // The state table's TTL attribute is in epoch seconds; rounding up keeps TTL off live entries.
    expiresAt: { N: String(Math.ceil(entry.expiresAt / 1000)) },
  };
  if (entry.usage) item.usage = { S: JSON.stringify(entry.usage) };
  if (entry.semanticRef) item.semanticRef = { S: JSON.stringify(entry.semanticRef) };
  if (entry.body.length > inlineBodyLimit) {
    const objectKey = cacheEntryKey.bodyObject(workspaceId, partition, key);
    await putObject(dataBucket(), objectKey, entry.body, { contentType: 'application/json', metadata: { [expiryMetadata]: String(entry.expiresAt) } });
    item.bodyObject = { S: objectKey };
  } else {
    item.body = { B: entry.body };
  }
  const { Attributes: replaced } = await dynamoClient().send(new PutItemCommand({ TableName: tables.state, Item: item, ReturnValues: 'ALL_OLD' }));
  const replacedRef = readSemanticRef(replaced?.semanticRef?.S);
  return replacedRef && replacedRef.id !== entry.semanticRef?.id ? replacedRef : undefined;
}

/**
 * Deletes every entry of a workspace, or of one partition of it, with the S3 bodies they point to,
 * a page at a time; returns how many entries it deleted (expired ones that TTL has not removed yet
 * included). A purge cut short (a timeout) keeps what it deleted; running it again finishes it.
 */
export async function purgeCacheEntries(workspaceId: string, partition?: string): Promise<number> {
  checkKeyParts(workspaceId, partition);
  const values: Record<string, AttributeValue> = { ':pk': { S: cacheEntryKey.partition(workspaceId) } };
  if (partition !== undefined) values[':prefix'] = { S: cacheEntryKey.sortPrefix(partition) };
  let deleted = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamoClient().send(
      new QueryCommand({
        TableName: tables.state,
        KeyConditionExpression: partition === undefined ? 'pk = :pk' : 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: values,
        ProjectionExpression: 'pk, sk, bodyObject, semanticRef',
        // An entry written just before the purge is purged too.
        ConsistentRead: true,
        Limit: purgePageSize,
        ExclusiveStartKey: start,
      }),
    );
    const items = page.Items ?? [];
    const objects: ObjectIdentifier[] = [];
    const semanticRefs: SemanticRef[] = [];
    for (const item of items) {
      if (item.bodyObject?.S) objects.push({ Key: item.bodyObject.S });
      const ref = readSemanticRef(item.semanticRef?.S);
      if (ref) semanticRefs.push(ref);
    }
    // What an item points to goes before the item: an item whose body or semantic entry is gone
    // reads as a miss, while a body or vector left without its item could not be found to delete.
    await deleteSemanticItems(workspaceId, semanticRefs);
    if (objects.length > 0) await deleteBodyObjects(objects);
    await writeInBatches(
      tables.state,
      items.map((item) => ({ DeleteRequest: { Key: { pk: item.pk!, sk: item.sk! } } })),
      'cache entries',
    );
    deleted += items.length;
    start = page.LastEvaluatedKey;
  } while (start);
  return deleted;
}

async function readBodyObject(objectKey: string, expiresAt: number): Promise<Buffer | undefined> {
  const object = await getObject(dataBucket(), objectKey);
  if (!object) return undefined;
  // A later write of the key (a forced refresh) replaces the object before its item: between the
  // two, the object is not this item's body.
  return object.metadata[expiryMetadata] === String(expiresAt) ? object.body : undefined;
}

async function deleteBodyObjects(objects: ObjectIdentifier[]): Promise<void> {
  const result = await s3Client().send(new DeleteObjectsCommand({ Bucket: dataBucket(), Delete: { Objects: objects, Quiet: true } }));
  const [first] = result.Errors ?? [];
  if (first) throw new Error(`S3 did not delete ${result.Errors!.length} cached bodies (first: ${first.Key}, ${first.Code}: ${first.Message}).`);
}

/** A stored ref, or undefined for one that cannot be read (its items then wait for TTL). */
function readSemanticRef(text: string | undefined): SemanticRef | undefined {
  if (!text) return undefined;
  try {
    const ref: unknown = JSON.parse(text);
    return isSemanticRef(ref) ? ref : undefined;
  } catch {
    return undefined;
  }
}

function itemKey(workspaceId: string, partition: string, key: string): Record<string, AttributeValue> {
  const { pk, sk } = cacheEntryKey.item(workspaceId, partition, key);
  return { pk: { S: pk }, sk: { S: sk } };
}

function checkKeyParts(...parts: Array<string | undefined>): void {
  for (const part of parts) {
    if (part !== undefined && !keyPartPattern.test(part))
      throw new Error(`Cache key part ${JSON.stringify(part.slice(0, 100))} is not 1 to 128 letters, digits, "_" or "-".`);
  }
}

/** A Buffer over the same bytes, without a copy. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
