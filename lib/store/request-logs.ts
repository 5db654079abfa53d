import { GetItemCommand, type AttributeValue, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { writeInBatches } from './batch-write';
import { dynamoClient } from './clients';
import { requestLogKey } from './keys';
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
  const requests: WriteRequest[] = [];
  for (const { record, line } of byKey.values()) {
    const expiresAt = Math.floor(Date.parse(record.created_at) / 1000) + retentionDays * 86_400;
    const key = requestLogKey.item(record.workspace_id!, record.id);
    const item: Record<string, AttributeValue> = {
      pk: { S: key.pk },
      sk: { S: key.sk },
      expiresAt: { N: String(expiresAt) },
      record: { S: line },
    };
    if (record.trace_id !== record.id) {
      item.gsi1pk = { S: requestLogKey.trace(record.workspace_id!, record.trace_id) };
      item.gsi1sk = { S: record.id };
    }
    requests.push({ PutRequest: { Item: item } });
  }
  await writeInBatches(tables.logs, requests, 'log records');
  return requests.length;
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
