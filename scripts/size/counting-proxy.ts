/**
 * A counting HTTP proxy in front of an emulator. The DynamoDB one asks for the consumed capacity of
 * every call (ReturnConsumedCapacity TOTAL, which the emulator computes from item sizes as DynamoDB
 * does) and adds it up as read and write request units by operation; the SQS and S3 ones count
 * requests by kind. The counts are read by the parent at a child's phase boundaries.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Service = 'dynamodb' | 'sqs' | 's3';

export interface Counts {
  /** Calls by operation (`GetItem`, `SendMessage`, `PUT`, ...). */
  calls: Record<string, number>;
  /** DynamoDB request units by operation. */
  units: Record<string, number>;
  readUnits: number;
  writeUnits: number;
  /** Units estimated because the answer had no ConsumedCapacity (one per item, two in a transaction). */
  estimatedUnits: number;
  sqsRequests: number;
  s3Writes: number;
  s3Reads: number;
}

export function emptyCounts(): Counts {
  return { calls: {}, units: {}, readUnits: 0, writeUnits: 0, estimatedUnits: 0, sqsRequests: 0, s3Writes: 0, s3Reads: 0 };
}

export function subtractCounts(after: Counts, before: Counts): Counts {
  const calls: Record<string, number> = {};
  for (const [name, count] of Object.entries(after.calls)) {
    const difference = count - (before.calls[name] ?? 0);
    if (difference !== 0) calls[name] = difference;
  }
  const units: Record<string, number> = {};
  for (const [name, count] of Object.entries(after.units)) {
    const difference = count - (before.units[name] ?? 0);
    if (difference !== 0) units[name] = difference;
  }
  return {
    calls,
    units,
    readUnits: after.readUnits - before.readUnits,
    writeUnits: after.writeUnits - before.writeUnits,
    estimatedUnits: after.estimatedUnits - before.estimatedUnits,
    sqsRequests: after.sqsRequests - before.sqsRequests,
    s3Writes: after.s3Writes - before.s3Writes,
    s3Reads: after.s3Reads - before.s3Reads,
  };
}

const readOperations = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);
const writeOperations = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

/** Items a call names, for an estimate when the answer carries no capacity. */
function itemsIn(operation: string, body: Record<string, unknown>): number {
  if (operation === 'BatchGetItem') {
    return Object.values((body.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>).reduce((n, table) => n + (table.Keys?.length ?? 0), 0);
  }
  if (operation === 'BatchWriteItem') return Object.values((body.RequestItems ?? {}) as Record<string, unknown[]>).reduce((n, list) => n + list.length, 0);
  if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') return ((body.TransactItems ?? []) as unknown[]).length;
  return 1;
}

/**
 * Units of a call whose answer carries no capacity (the emulator's transactions, a refused write):
 * a put by its item's size, anything else as one item of at most 1 KB (reads: 4 KB); doubled in a
 * transaction.
 */
export function estimatedUnits(operation: string, body: Record<string, unknown>): number {
  const transactional = operation.startsWith('Transact');
  const isRead = readOperations.has(operation);
  if (operation === 'TransactWriteItems') {
    const entries = (body.TransactItems ?? []) as Record<string, { Item?: Record<string, Attribute> } | undefined>[];
    return entries.reduce((sum, entry) => sum + 2 * (entry.Put?.Item ? Math.max(1, Math.ceil(itemBytes(entry.Put.Item) / 1024)) : 1), 0);
  }
  if (operation === 'PutItem' && body.Item) return Math.max(1, Math.ceil(itemBytes(body.Item as Record<string, Attribute>) / 1024));
  const perItem = isRead ? (transactional || body.ConsistentRead ? 1 : 0.5) : 1;
  return itemsIn(operation, body) * perItem * (transactional ? 2 : 1);
}

function capacityOf(answer: Record<string, unknown>): number | undefined {
  const consumed = answer.ConsumedCapacity as { CapacityUnits?: number } | { CapacityUnits?: number }[] | undefined;
  if (consumed === undefined) return undefined;
  const list = Array.isArray(consumed) ? consumed : [consumed];
  return list.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0);
}

/** Adds one DynamoDB call to the counts: its capacity if the answer has it, else an estimate. */
export function countDynamoCall(counts: Counts, operation: string, requestBody: Record<string, unknown>, answer: Record<string, unknown> | undefined): void {
  counts.calls[operation] = (counts.calls[operation] ?? 0) + 1;
  const isRead = readOperations.has(operation);
  if (!isRead && !writeOperations.has(operation)) return;
  let units = answer ? capacityOf(answer) : undefined;
  if (units === undefined) {
    units = estimatedUnits(operation, requestBody);
    counts.estimatedUnits += units;
  } else if (operation === 'GetItem' || operation === 'Query' || operation === 'Scan') {
    // DynamoDB bills a read that finds nothing as a read of one unit (half when eventually
    // consistent); the emulator reports zero.
    units = Math.max(units, requestBody.ConsistentRead ? 1 : 0.5);
  }
  counts.units[operation] = (counts.units[operation] ?? 0) + units;
  if (isRead) counts.readUnits += units;
  else counts.writeUnits += units;
}

/** The kind of an S3 request as billed: writes (PUT, POST, COPY, LIST) or reads (GET, HEAD, ...). */
export function s3Kind(method: string, url: string): 'write' | 'read' {
  if (method === 'PUT' || method === 'POST') return 'write';
  // A GET of a bucket (a list) is billed with the writes.
  const [path, query = ''] = url.split('?');
  const isList = method === 'GET' && (path.replace(/^\/+|\/+$/g, '').split('/').length <= 1 || /(^|&)list-type=/.test(query));
  return isList ? 'write' : 'read';
}

/** A global secondary index: its key attributes, and whether it projects the whole item. */
export interface IndexShape {
  hashKey: string;
  rangeKey?: string;
  projectsAll: boolean;
}

type Attribute = Record<string, unknown>;

/** An item's size as DynamoDB reckons it: attribute names plus values (numbers approximated). */
export function itemBytes(item: Record<string, Attribute>): number {
  let total = 0;
  for (const [name, value] of Object.entries(item)) total += Buffer.byteLength(name) + valueBytes(value);
  return total;
}

function valueBytes(value: Attribute): number {
  if ('S' in value) return Buffer.byteLength(String(value.S));
  if ('N' in value) return Math.ceil(String(value.N).replace(/^-|\./g, '').length / 2) + 1;
  if ('B' in value) return Buffer.from(String(value.B), 'base64').length;
  if ('BOOL' in value || 'NULL' in value) return 1;
  if ('SS' in value || 'NS' in value || 'BS' in value) {
    const list = (value.SS ?? value.NS ?? value.BS) as string[];
    return list.reduce((sum, entry) => sum + Buffer.byteLength(entry), 0);
  }
  if ('L' in value) return 3 + (value.L as Attribute[]).reduce((sum, entry) => sum + 1 + valueBytes(entry), 0);
  if ('M' in value)
    return 3 + Object.entries(value.M as Record<string, Attribute>).reduce((sum, [name, entry]) => sum + 1 + Buffer.byteLength(name) + valueBytes(entry), 0);
  return 0;
}

/**
 * The write units a write's global secondary indexes add (the emulator counts the table only): a
 * put of an item that has an index's keys writes the index too, one unit per KB projected; an
 * update that sets an index key attribute writes the index once. (An update that changes only
 * projected attributes also writes the index on DynamoDB; it is not seen from the request.)
 */
export function indexWriteUnits(operation: string, body: Record<string, unknown>, indexes: Readonly<Record<string, readonly IndexShape[]>>): number {
  const put = (table: string, item: Record<string, Attribute> | undefined) => {
    if (!item) return 0;
    const size = itemBytes(item);
    return (indexes[table] ?? [])
      .filter((index) => index.hashKey in item && (index.rangeKey === undefined || index.rangeKey in item))
      .reduce((sum, index) => sum + (index.projectsAll ? Math.max(1, Math.ceil(size / 1024)) : 1), 0);
  };
  const update = (table: string, expression: unknown, names: unknown) => {
    if (typeof expression !== 'string') return 0;
    const resolved = Object.entries((names ?? {}) as Record<string, string>).reduce((text, [alias, name]) => text.split(alias).join(name), expression);
    const words = new Set(resolved.split(/[^A-Za-z0-9_]+/));
    return (indexes[table] ?? []).filter((index) => words.has(index.hashKey) || (index.rangeKey !== undefined && words.has(index.rangeKey))).length;
  };
  const table = String(body.TableName ?? '');
  if (operation === 'PutItem') return put(table, body.Item as Record<string, Attribute>);
  if (operation === 'UpdateItem') return update(table, body.UpdateExpression, body.ExpressionAttributeNames);
  if (operation === 'BatchWriteItem') {
    let units = 0;
    for (const [name, requests] of Object.entries((body.RequestItems ?? {}) as Record<string, { PutRequest?: { Item: Record<string, Attribute> } }[]>))
      for (const request of requests) units += put(name, request.PutRequest?.Item);
    return units;
  }
  if (operation === 'TransactWriteItems') {
    let units = 0;
    for (const entry of (body.TransactItems ?? []) as Record<string, Record<string, unknown> | undefined>[]) {
      if (entry.Put) units += put(String(entry.Put.TableName), entry.Put.Item as Record<string, Attribute>);
      if (entry.Update) units += update(String(entry.Update.TableName), entry.Update.UpdateExpression, entry.Update.ExpressionAttributeNames);
    }
    return units;
  }
  return 0;
}

export interface CountingProxy {
  url: string;
  counts: Counts;
  close(): Promise<void>;
}

async function readAll(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startCountingProxy(
  service: Service,
  target: string,
  indexes: Readonly<Record<string, readonly IndexShape[]>> = {},
): Promise<CountingProxy> {
  const upstream = new URL(target);
  const counts = emptyCounts();
  const server: Server = createServer(async (incoming, outgoing) => {
    let body = await readAll(incoming);
    const headers = { ...incoming.headers };
    let operation = '';
    let parsed: Record<string, unknown> = {};
    if (service === 'dynamodb') {
      operation = String(headers['x-amz-target'] ?? '').split('.')[1] ?? '';
      try {
        parsed = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
      } catch {
        parsed = {};
      }
      if ((readOperations.has(operation) || writeOperations.has(operation)) && parsed.ReturnConsumedCapacity === undefined) {
        // The emulator checks no signature, so the body may change under it.
        body = Buffer.from(JSON.stringify({ ...parsed, ReturnConsumedCapacity: 'TOTAL' }));
        headers['content-length'] = String(body.length);
      }
    } else if (service === 'sqs') {
      counts.sqsRequests += 1;
      const action = String(headers['x-amz-target'] ?? '').split('.')[1] ?? /Action=([A-Za-z]+)/.exec(body.toString('utf8'))?.[1] ?? 'request';
      counts.calls[action] = (counts.calls[action] ?? 0) + 1;
    } else {
      const kind = s3Kind(incoming.method ?? 'GET', incoming.url ?? '/');
      if (kind === 'write') counts.s3Writes += 1;
      else counts.s3Reads += 1;
      const name = `${incoming.method} (${kind})`;
      counts.calls[name] = (counts.calls[name] ?? 0) + 1;
    }
    const forwarded = request({ host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers }, async (answer) => {
      if (service !== 'dynamodb') {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
        return;
      }
      const answerBody = await readAll(answer);
      let answerJson: Record<string, unknown> | undefined;
      try {
        answerJson = (answer.statusCode ?? 500) < 300 ? (JSON.parse(answerBody.toString('utf8') || '{}') as Record<string, unknown>) : undefined;
      } catch {
        answerJson = undefined;
      }
      // A failed call (a condition not met) still consumes a write; it is counted as estimated.
      if (operation) {
        countDynamoCall(counts, operation, parsed, answerJson);
        const indexUnits = (answer.statusCode ?? 500) < 300 ? indexWriteUnits(operation, parsed, indexes) : 0;
        if (indexUnits > 0) {
          counts.writeUnits += indexUnits;
          counts.units['index writes'] = (counts.units['index writes'] ?? 0) + indexUnits;
        }
      }
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      outgoing.end(answerBody);
    });
    forwarded.on('error', () => outgoing.destroy());
    forwarded.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
