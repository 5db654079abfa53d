import {
  BatchGetItemCommand,
  GetItemCommand,
  QueryCommand,
  type AttributeValue,
  type BatchGetItemCommandOutput,
  type KeysAndAttributes,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { writeInBatches } from './batch-write';
import { dynamoClient } from './clients';
import { sleep } from '../core/time';
import { logIndexKey, requestLogKey } from './keys';
import { putRecordsWithRollups, type RollupAdd } from './log-rollups';
import { queryNewestFirst, type Page } from './newest-first';
import { tables } from './tables';

const retentionDays = Number(process.env.GATEWAY_LOG_RETENTION_DAYS ?? 30);

/** What the store reads of a request-log record: its keys. The rest is the line, stored as it came. */
export interface LogRecordKeys {
  id: string;
  trace_id: string;
  workspace_id?: string | null;
  created_at: string;
}

/** A request-log line as it was written, with its parsed record for the keys. */
export interface StoredLogLine<R extends LogRecordKeys = LogRecordKeys> {
  record: R;
  line: string;
  /**
   * What filters compare (`f_<name>`: strings and numbers, `f_md` a map of metadata values), stored
   * on the record and on each of its index items, which list it under `dimension=value`.
   */
  filters?: { fields: Record<string, string | number | Record<string, string>>; index: { dimension: string; value: string }[] };
  /** The rollup items the record adds into, once: with them the record is stored in a transaction. */
  rollups?: RollupAdd[];
}

/**
 * Writes log records in batches. Keys come from the record's own id, so a line delivered twice
 * overwrites itself instead of doubling. The record is stored as the JSON line it arrived as (one
 * string attribute: no re-marshalling of nested metadata). Records without a workspace (requests
 * refused before authentication) stay in the function's log stream only.
 *
 * The trace index is sparse: a request sent without `x-gateway-trace-id` is a trace of its own whose
 * id is the record's id, found by key, so only records of caller-named traces carry index keys
 * (most traffic then costs one item write instead of two).
 */
export async function writeLogRecords(entries: StoredLogLine[]): Promise<number> {
  const byKey = new Map<string, StoredLogLine>();
  for (const entry of entries) if (entry.record.workspace_id) byKey.set(entry.record.id, entry);
  const puts: WriteRequest[] = [];
  const indexPuts: WriteRequest[] = [];
  const counted: { item: Record<string, AttributeValue>; rollups: RollupAdd[] }[] = [];
  for (const { record, line, filters, rollups } of byKey.values()) {
    const expiresAt = Math.floor(Date.parse(record.created_at) / 1000) + retentionDays * 86_400;
    const key = requestLogKey.item(record.workspace_id!, record.id);
    const fields = filters ? marshall(filters.fields, { removeUndefinedValues: true }) : {};
    const item: Record<string, AttributeValue> = {
      pk: { S: key.pk },
      sk: { S: key.sk },
      expiresAt: { N: String(expiresAt) },
      record: { S: line },
      ...fields,
    };
    if (record.trace_id !== record.id) {
      item.gsi1pk = { S: requestLogKey.trace(record.workspace_id!, record.trace_id) };
      item.gsi1sk = { S: record.id };
    }
    for (const { dimension, value } of filters?.index ?? []) {
      const pk = logIndexKey.partition(record.workspace_id!, dimension, value);
      indexPuts.push({ PutRequest: { Item: { pk: { S: pk }, sk: { S: key.sk }, expiresAt: { N: String(expiresAt) }, ...fields } } });
    }
    if (rollups) counted.push({ item, rollups });
    else puts.push({ PutRequest: { Item: item } });
  }
  // Index items first: a record is listed by its filters once it is stored, and writing them again is harmless.
  await writeInBatches(tables.logs, [...indexPuts, ...puts], 'log records');
  return puts.length + (await putRecordsWithRollups(counted));
}

/** One equality a filtered listing checks after the read: an attribute path (`f_md`, key) and its value. */
export interface LogCondition {
  path: string[];
  value: string | number;
}

export interface FilteredLogQuery {
  /** The index partition to read (the most selective filter), or the workspace's own listing. */
  index?: { dimension: string; value: string };
  conditions: LogCondition[];
  /** Bounds of the records' ids (ids sort by the request's start). */
  fromId: string;
  toId: string;
  limit: number;
  after?: string;
}

/**
 * One page of a workspace's records, newest first, read from one partition (the workspace's own,
 * or one index partition) between two ids, the other filters checked by DynamoDB after the read.
 * Reads on until the page is full or the range ends; index items are then resolved to their records.
 */
export async function listLogsFiltered<R extends LogRecordKeys>(workspaceId: string, query: FilteredLogQuery): Promise<Page<R>> {
  const partition = query.index ? logIndexKey.partition(workspaceId, query.index.dimension, query.index.value) : requestLogKey.workspace(workspaceId);
  const prefix = requestLogKey.sortPrefix;
  const ceiling = `${query.toId}\uffff`;
  const upper = query.after && query.after < ceiling ? query.after : ceiling;
  const names: Record<string, string> = { '#sk': 'sk' };
  const values: Record<string, AttributeValue> = { ':pk': { S: partition }, ':from': { S: prefix + query.fromId }, ':to': { S: prefix + upper } };
  const filters = query.conditions.map((condition, n) => {
    const path = condition.path.map((part, m) => {
      names[`#c${n}_${m}`] = part;
      return `#c${n}_${m}`;
    });
    values[`:c${n}`] = typeof condition.value === 'number' ? { N: String(condition.value) } : { S: condition.value };
    return `${path.join('.')} = :c${n}`;
  });
  const found: Record<string, AttributeValue>[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamoClient().send(
      new QueryCommand({
        TableName: tables.logs,
        KeyConditionExpression: 'pk = :pk AND #sk BETWEEN :from AND :to',
        FilterExpression: filters.length > 0 ? filters.join(' AND ') : undefined,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ProjectionExpression: query.index ? 'pk, sk' : undefined,
        ScanIndexForward: false,
        Limit: Math.max(50, (query.limit + 1) * 2),
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) if (item.sk!.S !== prefix + query.after) found.push(item);
    start = page.LastEvaluatedKey;
  } while (start && found.length <= query.limit);
  const page = found.slice(0, query.limit);
  const records = query.index
    ? await getRecords(
        workspaceId,
        page.map((item) => item.sk!.S!),
      )
    : page.map((item) => unmarshall(item));
  return { data: records.map((item) => storedRecord<R>(item)), has_more: found.length > query.limit };
}

/** The records under these sort keys of the workspace's partition, in the order given (a BatchGetItem per 100). */
async function getRecords(workspaceId: string, sortKeys: string[]): Promise<Record<string, any>[]> {
  const bySort = new Map<string, Record<string, any>>();
  const pk = requestLogKey.workspace(workspaceId);
  for (let offset = 0; offset < sortKeys.length; offset += 100) {
    let pending: KeysAndAttributes | undefined = { Keys: sortKeys.slice(offset, offset + 100).map((sk) => ({ pk: { S: pk }, sk: { S: sk } })) };
    for (let attempt = 0; pending?.Keys?.length; attempt++) {
      if (attempt > 0) await sleep(Math.min(1000, 50 * 2 ** attempt));
      const result: BatchGetItemCommandOutput = await dynamoClient().send(new BatchGetItemCommand({ RequestItems: { [tables.logs]: pending } }));
      for (const item of result.Responses?.[tables.logs] ?? []) bySort.set(item.sk!.S!, unmarshall(item));
      pending = result.UnprocessedKeys?.[tables.logs];
    }
  }
  // A record whose index item was written and whose own write had not yet landed is left out.
  return sortKeys.flatMap((sk) => bySort.get(sk) ?? []);
}

/** A stored record: the JSON line (current layout) or a map (items written before it). */
function storedRecord<R extends LogRecordKeys>(item: Record<string, any>): R {
  return typeof item.record === 'string' ? JSON.parse(item.record) : item.record;
}

/** A workspace's logs, newest first. */
export async function listLogs<R extends LogRecordKeys>(workspaceId: string, page: { limit: number; after?: string }): Promise<Page<R>> {
  const result = await queryNewestFirst({ table: tables.logs, partition: requestLogKey.workspace(workspaceId), sortPrefix: requestLogKey.sortPrefix, ...page });
  return { data: result.items.map((item) => storedRecord<R>(item)), has_more: result.has_more };
}

/**
 * One page of a trace's records in a workspace, newest first: those the trace index holds, and the
 * request whose own id names the trace (it started the trace without naming it), which the index
 * does not hold. The index page reads one record more than the limit, so merging that one record
 * in keeps both the page and `has_more` exact.
 */
export async function findLogsByTrace<R extends LogRecordKeys>(
  workspaceId: string,
  traceId: string,
  page: { limit: number; after?: string },
): Promise<Page<R>> {
  const ownMayBeOnPage = traceId.startsWith('log_') && (page.after === undefined || traceId < page.after);
  const [indexed, own] = await Promise.all([
    queryNewestFirst({ table: tables.logs, index: 'gsi1', partition: requestLogKey.trace(workspaceId, traceId), ...page }),
    ownMayBeOnPage ? dynamoClient().send(new GetItemCommand({ TableName: tables.logs, Key: marshall(requestLogKey.item(workspaceId, traceId)) })) : undefined,
  ]);
  const records = indexed.items.map((item) => storedRecord<R>(item));
  const first = own?.Item ? storedRecord<R>(unmarshall(own.Item)) : undefined;
  if (first?.trace_id !== traceId || records.some((record) => record.id === traceId)) return { data: records, has_more: indexed.has_more };
  records.push(first);
  records.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return { data: records.slice(0, page.limit), has_more: indexed.has_more || records.length > page.limit };
}
