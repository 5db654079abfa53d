import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { decodeVector, defaultPerBucketLimit, encodeVector, lshTables, normalise, signatures as vectorSignatures, type Vector } from '../core/semantic-index';
import { writeInBatches } from './batch-write';
import { queryPageFast } from './lean-dynamo';
import { semanticEntryKey } from './keys';
import { tables } from './tables';

/** Where a semantic entry's answer is: an exact cache entry of the same workspace. */
export interface AnswerRef {
  partition: string;
  key: string;
}

export interface SemanticEntry {
  /** Time-sortable (`newId`), so a bucket's Query reads the newest entries first. */
  id: string;
  /** The embedding of the request's last user message. */
  vector: Vector;
  answerRef: AnswerRef;
  /** Epoch ms, absolute, as the answer's own. */
  expiresAt: number;
}

/**
 * Where an entry's items are: its scope, id and bucket signatures. The exact cache entry it
 * answers with keeps this, so purging or replacing that entry can delete them without a scan.
 */
export interface SemanticRef {
  scope: string;
  id: string;
  signatures: string[];
}

/** A stored entry that shares at least one bucket with a query; its vector is unit length. */
export interface SemanticCandidate {
  id: string;
  vector: Float32Array;
  answerRef: AnswerRef;
  expiresAt: number;
}

export interface CandidateQuery {
  /** Items read per bucket at most, newest first; `defaultPerBucketLimit` unless given. */
  perBucketLimit?: number;
  /** Epoch ms that expiry is judged at. */
  now?: number;
}

/**
 * A Query page stops at 1 MB: 50 items of 3,072-dimension vectors (~16 KB each) stay within it, so
 * the limit, not the page size, decides what a bucket gives.
 */
const maxPerBucketLimit = 50;

/** Workspace ids, scopes, entry ids and answer partitions and keys are safe between the `#`s of a key. */
const keyPartPattern = /^[A-Za-z0-9_-]{1,128}$/;
const signaturePattern = /^[0-9a-f]{1,8}$/;

/**
 * Stores an entry in its bucket of every LSH table: `lshTables` items, written in one batch.
 * Each item holds the whole (normalised) vector, so a lookup needs no second read to compare.
 */
export async function putSemanticEntry(workspaceId: string, scope: string, entry: SemanticEntry): Promise<void> {
  const requests = semanticEntryItems(workspaceId, scope, entry).map((Item) => ({ PutRequest: { Item } }));
  await writeInBatches(tables.state, requests, 'semantic cache items');
}

/**
 * The state-table items of an entry, one per LSH table, as `putSemanticEntry` writes them; exported
 * so a bulk loader (the benchmark's) writes exactly these rather than a copy of their layout.
 */
export function semanticEntryItems(workspaceId: string, scope: string, entry: SemanticEntry): Record<string, AttributeValue>[] {
  checkKeyParts(workspaceId, scope, entry.id, entry.answerRef.partition, entry.answerRef.key);
  if (!Number.isFinite(entry.expiresAt)) throw new Error(`A semantic entry's expiry must be epoch ms, not ${entry.expiresAt}.`);
  const unit = normalise(entry.vector);
  const attributes: Record<string, AttributeValue> = {
    vector: { S: encodeVector(unit) },
    answerPartition: { S: entry.answerRef.partition },
    answerKey: { S: entry.answerRef.key },
    expiresAtMs: { N: String(entry.expiresAt) },
    // The state table's TTL attribute is in epoch seconds; rounding up keeps TTL off live entries.
    expiresAt: { N: String(Math.ceil(entry.expiresAt / 1000)) },
  };
  return vectorSignatures(unit).map((signature, table) => {
    const { pk, sk } = semanticEntryKey.item(workspaceId, scope, table, signature, entry.id);
    return { pk: { S: pk }, sk: { S: sk }, ...attributes };
  });
}

/** The ref of an entry about to be stored: its buckets are the signatures of its vector. */
export function semanticRefOf(scope: string, id: string, vector: Vector): SemanticRef {
  return { scope, id, signatures: vectorSignatures(normalise(vector)) };
}

/** Whether a value read back from the store is a ref this module could have written. */
export function isSemanticRef(value: unknown): value is SemanticRef {
  const ref = value as SemanticRef | null;
  return (
    typeof ref === 'object' &&
    ref !== null &&
    typeof ref.scope === 'string' &&
    keyPartPattern.test(ref.scope) &&
    typeof ref.id === 'string' &&
    keyPartPattern.test(ref.id) &&
    Array.isArray(ref.signatures) &&
    ref.signatures.length === lshTables &&
    ref.signatures.every((signature) => typeof signature === 'string' && signaturePattern.test(signature))
  );
}

/** Deletes the items of the entries `refs` name; a ref that is not there (any more) costs nothing. */
export async function deleteSemanticItems(workspaceId: string, refs: readonly SemanticRef[]): Promise<void> {
  const requests = refs.flatMap((ref) => {
    checkKeyParts(workspaceId, ref.scope, ref.id);
    checkSignatures(ref.signatures);
    return ref.signatures.map((signature, table) => {
      const { pk, sk } = semanticEntryKey.item(workspaceId, ref.scope, table, signature, ref.id);
      return { DeleteRequest: { Key: { pk: { S: pk }, sk: { S: sk } } } };
    });
  });
  await writeInBatches(tables.state, requests, 'semantic cache items');
}

/**
 * The live entries of a scope that share a bucket with a query's `signatures` (one per table, as
 * `signatures()` gives them): one Query per table, in parallel, each reading at most
 * `perBucketLimit` items, newest first — so at most `lshTables × perBucketLimit` items however
 * large the cache grows. An entry found in several tables comes back once; an expired one (TTL
 * deletes within days, not at once) and one whose vector cannot be read not at all.
 */
export async function findSemanticCandidates(
  workspaceId: string,
  scope: string,
  signatures: readonly string[],
  query: CandidateQuery = {},
): Promise<SemanticCandidate[]> {
  return (await findSemanticCandidatesWithReads(workspaceId, scope, signatures, query)).candidates;
}

export interface CandidateLookup {
  candidates: SemanticCandidate[];
  /**
   * Items the Queries returned, duplicates and expired ones included: what the lookup paid for in
   * read capacity, and what must stay bounded as a scope grows.
   */
  itemsRead: number;
}

/** `findSemanticCandidates`, with the count of items its Queries read. */
export async function findSemanticCandidatesWithReads(
  workspaceId: string,
  scope: string,
  signatures: readonly string[],
  query: CandidateQuery = {},
): Promise<CandidateLookup> {
  checkKeyParts(workspaceId, scope);
  checkSignatures(signatures);
  const limit = query.perBucketLimit ?? defaultPerBucketLimit;
  if (!Number.isInteger(limit) || limit < 1 || limit > maxPerBucketLimit)
    throw new Error(`perBucketLimit must be an integer from 1 to ${maxPerBucketLimit}, not ${limit}.`);
  const now = query.now ?? Date.now();
  const pages = await Promise.all(
    signatures.map((signature, table) =>
      queryPageFast({
        TableName: tables.state,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: semanticEntryKey.bucket(workspaceId, scope, table, signature) } },
        ProjectionExpression: 'sk, vector, answerPartition, answerKey, expiresAtMs',
        ScanIndexForward: false,
        Limit: limit,
      }),
    ),
  );
  const items = pages.flat();
  const candidates = new Map<string, SemanticCandidate>();
  for (const item of items) {
    const id = item.sk?.S;
    if (!id || candidates.has(id)) continue;
    const expiresAt = Number(item.expiresAtMs?.N);
    // NaN (an item without the attribute) compares false, so it is dropped too.
    if (!(expiresAt > now)) continue;
    const vector = readVector(item.vector?.S);
    if (!vector || !item.answerPartition?.S || !item.answerKey?.S) continue;
    candidates.set(id, { id, vector, answerRef: { partition: item.answerPartition.S, key: item.answerKey.S }, expiresAt });
  }
  return { candidates: [...candidates.values()], itemsRead: items.length };
}

/** A damaged item must not fail every lookup of its buckets until TTL removes it: it is no candidate. */
function readVector(text: string | undefined): Float32Array | undefined {
  if (!text) return undefined;
  try {
    return decodeVector(text);
  } catch {
    return undefined;
  }
}

function checkSignatures(signatures: readonly string[]): void {
  if (signatures.length !== lshTables || !signatures.every((signature) => signaturePattern.test(signature))) {
    throw new Error(`Expected ${lshTables} LSH signatures of hex digits, got ${JSON.stringify(signatures).slice(0, 200)}.`);
  }
}

function checkKeyParts(...parts: string[]): void {
  for (const part of parts) {
    if (!keyPartPattern.test(part))
      throw new Error(`Semantic cache key part ${JSON.stringify(String(part).slice(0, 100))} is not 1 to 128 letters, digits, "_" or "-".`);
  }
}
