import { DeleteItemCommand, GetItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { fileKey } from './keys';
import type { Page } from './newest-first';
import { tables } from './tables';

/** A file of the gateway's Files API as stored; its bytes are the S3 object `fileKey.object(workspace_id, id)`. */
export interface FileItem {
  id: string;
  workspace_id: string;
  /** As the client sent it: data, never part of a key or a path. */
  filename: string;
  purpose: string;
  bytes: number;
  /** Epoch seconds, as OpenAI's `created_at`. */
  created_at: number;
}

export interface FileListQuery {
  limit: number;
  /** The last id of the previous page. */
  after?: string;
  order: 'asc' | 'desc';
  purpose?: string;
}

/** Stores a new file's record; false when one with its id exists already. */
export function putFileItem(item: FileItem): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new PutItemCommand({
        TableName: tables.control,
        Item: marshall({ ...fileKey.item(item.workspace_id, item.id), gsi1pk: fileKey.workspaceList(item.workspace_id), gsi1sk: item.id, ...item }),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    ),
  );
}

export async function getFileItem(workspaceId: string, id: string): Promise<FileItem | undefined> {
  const result = await dynamoClient().send(
    new GetItemCommand({ TableName: tables.control, Key: marshall(fileKey.item(workspaceId, id)), ConsistentRead: true }),
  );
  return result.Item ? strip(unmarshall(result.Item)) : undefined;
}

/** Deletes a file's record; false when there was none. */
export async function deleteFileItem(workspaceId: string, id: string): Promise<boolean> {
  const result = await dynamoClient().send(
    new DeleteItemCommand({ TableName: tables.control, Key: marshall(fileKey.item(workspaceId, id)), ReturnValues: 'ALL_OLD' }),
  );
  return result.Attributes !== undefined;
}

/**
 * One page of a workspace's files in id (creation) order. A purpose filter is applied by DynamoDB
 * after it reads each page, so pages are read until the page is full or the listing ends; a match
 * beyond the limit says there is a next page.
 */
export async function listFileItems(workspaceId: string, query: FileListQuery): Promise<Page<FileItem>> {
  const values: Record<string, string> = { ':pk': fileKey.workspaceList(workspaceId) };
  let condition = 'gsi1pk = :pk';
  if (query.after) {
    condition += query.order === 'desc' ? ' AND gsi1sk < :after' : ' AND gsi1sk > :after';
    values[':after'] = query.after;
  }
  if (query.purpose !== undefined) values[':purpose'] = query.purpose;
  const items: FileItem[] = [];
  let start: Record<string, any> | undefined;
  do {
    const page = await dynamoClient().send(
      new QueryCommand({
        TableName: tables.control,
        IndexName: 'gsi1',
        KeyConditionExpression: condition,
        FilterExpression: query.purpose === undefined ? undefined : 'purpose = :purpose',
        ExpressionAttributeValues: marshall(values),
        ScanIndexForward: query.order === 'asc',
        // Without a filter every item read is a match: read no more than the page needs. With one,
        // DynamoDB's own pages (1 MB) keep a sparse purpose from costing a call per few items.
        Limit: query.purpose === undefined ? query.limit + 1 - items.length : undefined,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) items.push(strip(unmarshall(item)));
    start = page.LastEvaluatedKey;
  } while (start && items.length <= query.limit);
  return { data: items.slice(0, query.limit), has_more: items.length > query.limit };
}

/** The item without its key attributes. */
function strip(item: Record<string, unknown>): FileItem {
  const { pk: _pk, sk: _sk, gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, ...fields } = item;
  return fields as unknown as FileItem;
}
