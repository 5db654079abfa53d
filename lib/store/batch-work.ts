/**
 * A managed batch's work in the state table and S3: its chunks (each a lease and the set of its
 * lines counted) and its finished lines (each one result, written once). Every write is
 * conditional, so a chunk message delivered twice or a worker that dies half-way never writes or
 * counts a line twice.
 */
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { GetItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand, type AttributeValue, type QueryCommandInput } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient, s3Client } from './clients';
import { writeInBatches } from './batch-write';
import { writeIfCondition } from './conditional';
import { bucket } from './file-objects';
import { batchKey } from './keys';
import { tables } from './tables';

export interface ChunkPlan {
  chunk: number;
  /** The number (from 1) of the chunk's first line. */
  first: number;
  lines: number;
}

export interface ChunkState extends ChunkPlan {
  completed: number;
  failed: number;
  /** Line numbers counted in `completed` or `failed`. */
  done: Set<number>;
  /** True once every line has a result or the chunk was given up. */
  finished: boolean;
  lease_owner?: string;
  lease_until?: number;
}

/** A finished line: its line of the output or error file, ready to write. */
export interface LineResult {
  line: number;
  custom_id: string;
  ok: boolean;
  /** The JSONL line (without its newline). */
  text: string;
}

/** Results above this go to S3 (an item is at most 400 KB). */
const maxInlineResultBytes = 300 * 1024;

/** Each chunk's lines, as the validation cut them from the input file. */
export async function putChunkLines(workspaceId: string, batchId: string, chunk: number, body: Buffer): Promise<void> {
  await s3Client().send(
    new PutObjectCommand({ Bucket: bucket(), Key: batchKey.chunkObject(workspaceId, batchId, chunk), Body: body, ContentType: 'application/jsonl' }),
  );
}

export async function readChunkLines(workspaceId: string, batchId: string, chunk: number): Promise<Buffer> {
  return readObject(batchKey.chunkObject(workspaceId, batchId, chunk));
}

/** The line index of a batch a provider runs (keys.ts, `lineIndexObject`). */
export async function putLineIndex(workspaceId: string, batchId: string, body: Buffer): Promise<void> {
  await s3Client().send(
    new PutObjectCommand({ Bucket: bucket(), Key: batchKey.lineIndexObject(workspaceId, batchId), Body: body, ContentType: 'application/jsonl' }),
  );
}

export async function readLineIndex(workspaceId: string, batchId: string): Promise<Buffer> {
  return readObject(batchKey.lineIndexObject(workspaceId, batchId));
}

/** Creates the chunk items the plan names; an item that exists already (a retried validation) keeps its progress. */
export async function putChunkPlans(workspaceId: string, batchId: string, plans: readonly ChunkPlan[], expiresAt: number): Promise<void> {
  await forEachLimited(plans, 16, (plan) =>
    writeIfCondition(() =>
      dynamoClient().send(
        new PutItemCommand({
          TableName: tables.state,
          Item: marshall({ ...batchKey.chunk(workspaceId, batchId, plan.chunk), ...plan, completed: 0, failed: 0, finished: false, expiresAt }),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    ),
  );
}

/** What a claim came to: the chunk, or another worker's lease and when it runs out, or nothing to run (finished or gone). */
export type ChunkClaim = { state: ChunkState } | { heldUntil: number } | undefined;

/**
 * Takes the chunk's lease for `leaseMs`. A worker that dies leaves its lease to run out; a live one
 * renews it (`renewChunkLease`).
 */
export async function claimChunk(workspaceId: string, batchId: string, chunk: number, owner: string, leaseMs: number): Promise<ChunkClaim> {
  const now = Date.now();
  let claimed: ChunkState | undefined;
  const written = await writeIfCondition(async () => {
    const result = await dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.state,
        Key: marshall(batchKey.chunk(workspaceId, batchId, chunk)),
        UpdateExpression: 'SET lease_owner = :owner, lease_until = :until',
        ConditionExpression: 'attribute_exists(pk) AND finished = :false AND (attribute_not_exists(lease_until) OR lease_until < :now OR lease_owner = :owner)',
        ExpressionAttributeValues: marshall({ ':owner': owner, ':until': now + leaseMs, ':now': now, ':false': false }),
        ReturnValues: 'ALL_NEW',
      }),
    );
    claimed = result.Attributes ? chunkState(result.Attributes) : undefined;
  });
  if (written && claimed) return { state: claimed };
  const current = await getChunk(workspaceId, batchId, chunk);
  if (!current || current.finished) return undefined;
  return { heldUntil: current.lease_until ?? now };
}

/** Extends the owner's lease; false when it is no longer the owner's (it ran out and another worker took it). */
export async function renewChunkLease(workspaceId: string, batchId: string, chunk: number, owner: string, leaseMs: number): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.state,
        Key: marshall(batchKey.chunk(workspaceId, batchId, chunk)),
        UpdateExpression: 'SET lease_until = :until',
        ConditionExpression: 'lease_owner = :owner',
        ExpressionAttributeValues: marshall({ ':owner': owner, ':until': Date.now() + leaseMs }),
      }),
    ),
  );
}

/** Gives the lease back (only the owner's), marking the chunk finished when it is. */
export async function releaseChunk(workspaceId: string, batchId: string, chunk: number, owner: string, finished: boolean): Promise<void> {
  await writeIfCondition(() =>
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.state,
        Key: marshall(batchKey.chunk(workspaceId, batchId, chunk)),
        UpdateExpression: finished ? 'SET finished = :true REMOVE lease_owner, lease_until' : 'REMOVE lease_owner, lease_until',
        ConditionExpression: 'lease_owner = :owner',
        ExpressionAttributeValues: marshall(finished ? { ':owner': owner, ':true': true } : { ':owner': owner }),
      }),
    ),
  );
}

/** Marks a chunk finished whoever holds it: a chunk given up (its message poisoned) ends so the batch can. */
export async function finishChunk(workspaceId: string, batchId: string, chunk: number): Promise<void> {
  await dynamoClient().send(
    new UpdateItemCommand({
      TableName: tables.state,
      Key: marshall(batchKey.chunk(workspaceId, batchId, chunk)),
      UpdateExpression: 'SET finished = :true REMOVE lease_owner, lease_until',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: marshall({ ':true': true }),
    }),
  );
}

/**
 * Stores a line's result: true when this call wrote it, false when the line had one already (a
 * worker before this one finished it). A result too large for an item goes to S3 first.
 */
export async function putLineResult(workspaceId: string, batchId: string, result: LineResult, expiresAt: number): Promise<boolean> {
  return writeIfCondition(async () =>
    dynamoClient().send(
      new PutItemCommand({
        TableName: tables.state,
        Item: await resultItem(workspaceId, batchId, result, expiresAt),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    ),
  );
}

/**
 * Stores the results of lines this worker ran, 25 to a call. Unconditional: only the chunk's lease
 * holder runs its lines, a line's result is keyed by its number (so a second write replaces, never
 * adds), and counting — what must happen once — is conditional (`countLines`).
 */
export async function putLineResults(workspaceId: string, batchId: string, results: readonly LineResult[], expiresAt: number): Promise<void> {
  const requests = await Promise.all(results.map(async (result) => ({ PutRequest: { Item: await resultItem(workspaceId, batchId, result, expiresAt) } })));
  await writeInBatches(tables.state, requests, 'batch line results');
}

async function resultItem(workspaceId: string, batchId: string, result: LineResult, expiresAt: number) {
  const key = batchKey.line(workspaceId, batchId, result.line);
  let fields: Record<string, unknown> = { custom_id: result.custom_id, ok: result.ok, text: result.text };
  if (Buffer.byteLength(result.text) > maxInlineResultBytes) {
    const objectKey = batchKey.lineObject(workspaceId, batchId, result.line);
    await s3Client().send(new PutObjectCommand({ Bucket: bucket(), Key: objectKey, Body: result.text, ContentType: 'application/json' }));
    fields = { custom_id: result.custom_id, ok: result.ok, text_object: objectKey };
  }
  return marshall({ ...key, line: result.line, ...fields, expiresAt });
}

/**
 * Counts lines in their chunk, each once, in one conditional write: false when one of them was
 * counted already (the caller then counts them one by one).
 */
export async function countLines(workspaceId: string, batchId: string, chunk: number, lines: readonly { line: number; ok: boolean }[]): Promise<boolean> {
  if (lines.length === 0) return true;
  const values: Record<string, AttributeValue> = {
    ':lines': { NS: lines.map(({ line }) => String(line)) },
    ':completed': { N: String(lines.filter(({ ok }) => ok).length) },
    ':failed': { N: String(lines.filter(({ ok }) => !ok).length) },
  };
  const conditions = lines.map(({ line }, index) => {
    values[`:n${index}`] = { N: String(line) };
    return `NOT contains(done, :n${index})`;
  });
  return writeIfCondition(() =>
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.state,
        Key: marshall(batchKey.chunk(workspaceId, batchId, chunk)),
        UpdateExpression: 'ADD done :lines, completed :completed, failed :failed',
        ConditionExpression: `attribute_exists(pk) AND ${conditions.join(' AND ')}`,
        ExpressionAttributeValues: values,
      }),
    ),
  );
}

/** Counts a line in its chunk once: false when it was counted already. */
export async function countLine(workspaceId: string, batchId: string, chunk: number, line: number, ok: boolean): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.state,
        Key: marshall(batchKey.chunk(workspaceId, batchId, chunk)),
        UpdateExpression: 'ADD done :line, #count :one',
        ConditionExpression: 'attribute_exists(pk) AND NOT contains(done, :n)',
        ExpressionAttributeNames: { '#count': ok ? 'completed' : 'failed' },
        ExpressionAttributeValues: { ':line': { NS: [String(line)] }, ':n': { N: String(line) }, ':one': { N: '1' } },
      }),
    ),
  );
}

/** Which lines from `first` to `last` have a result, with whether each was answered. */
export async function linesWithResults(workspaceId: string, batchId: string, first: number, last: number): Promise<Map<number, boolean>> {
  const found = new Map<number, boolean>();
  const query = {
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :first AND :last',
    ExpressionAttributeValues: marshall({
      ':pk': batchKey.work(workspaceId, batchId),
      ':first': batchKey.line(workspaceId, batchId, first).sk,
      ':last': batchKey.line(workspaceId, batchId, last).sk,
    }),
    ProjectionExpression: 'line, ok',
  };
  for await (const item of queryWork(query)) found.set(Number(item.line?.N), item.ok?.BOOL === true);
  return found;
}

export async function getChunk(workspaceId: string, batchId: string, chunk: number): Promise<ChunkState | undefined> {
  const result = await dynamoClient().send(
    new GetItemCommand({ TableName: tables.state, Key: marshall(batchKey.chunk(workspaceId, batchId, chunk)), ConsistentRead: true }),
  );
  return result.Item ? chunkState(result.Item) : undefined;
}

/** Every chunk of the batch, in order. */
export async function listChunks(workspaceId: string, batchId: string): Promise<ChunkState[]> {
  const chunks: ChunkState[] = [];
  for await (const item of queryWork(underPrefix(workspaceId, batchId, batchKey.chunkPrefix))) chunks.push(chunkState(item));
  return chunks;
}

/** The batch's results in line order, a page at a time. */
export async function* readLineResults(workspaceId: string, batchId: string): AsyncGenerator<LineResult> {
  for await (const raw of queryWork(underPrefix(workspaceId, batchId, batchKey.linePrefix))) {
    const item = unmarshall(raw);
    const text = typeof item.text_object === 'string' ? (await readObject(item.text_object)).toString('utf8') : String(item.text);
    yield { line: item.line, custom_id: item.custom_id, ok: item.ok === true, text };
  }
}

function underPrefix(workspaceId: string, batchId: string, prefix: string) {
  return {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: marshall({ ':pk': batchKey.work(workspaceId, batchId), ':prefix': prefix }),
  };
}

/** Every item a query of the batch's work partition finds, page after page, read consistently (a worker just wrote them). */
async function* queryWork(query: Pick<QueryCommandInput, 'KeyConditionExpression' | 'ExpressionAttributeValues' | 'ProjectionExpression'>) {
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamoClient().send(new QueryCommand({ TableName: tables.state, ...query, ConsistentRead: true, ExclusiveStartKey: start }));
    yield* page.Items ?? [];
    start = page.LastEvaluatedKey;
  } while (start);
}

function chunkState(raw: Record<string, AttributeValue>): ChunkState {
  const item = unmarshall(raw);
  return {
    chunk: item.chunk,
    first: item.first,
    lines: item.lines,
    completed: item.completed ?? 0,
    failed: item.failed ?? 0,
    done: new Set<number>(item.done ? [...(item.done as Set<number>)] : []),
    finished: item.finished === true,
    lease_owner: item.lease_owner,
    lease_until: item.lease_until,
  };
}

async function readObject(key: string): Promise<Buffer> {
  const result = await s3Client().send(new GetObjectCommand({ Bucket: bucket(), Key: key }));
  return Buffer.from(await (result.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
}

async function forEachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(runners);
}
