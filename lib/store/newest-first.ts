import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';

/** One page of a listing, newest first. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
}

export interface NewestFirstQuery {
  table: string;
  /** The GSI holding the listing (`gsi1pk`/`gsi1sk`), or undefined for the table's own keys (`pk`/`sk`). */
  index?: 'gsi1';
  partition: string;
  /** Sort keys of the listing start with this (e.g. `LOG#`); the page cursor is a sort key without it. */
  sortPrefix?: string;
  limit: number;
  /** The last id of the previous page. */
  after?: string;
  projection?: { expression: string; names?: Record<string, string> };
}

/**
 * One page of a listing whose sort keys are time-sortable ids: newest first, `after` continuing
 * from the previous page's last id, one item more read to know whether there is a next page.
 */
export async function queryNewestFirst(query: NewestFirstQuery): Promise<{ items: Record<string, any>[]; has_more: boolean }> {
  const [pk, sk] = query.index ? ['gsi1pk', 'gsi1sk'] : ['pk', 'sk'];
  const prefix = query.sortPrefix ?? '';
  const values: Record<string, string> = { ':pk': query.partition };
  let condition = `${pk} = :pk`;
  if (query.after) {
    condition += ` AND ${sk} < :after`;
    values[':after'] = prefix + query.after;
  } else if (prefix) {
    condition += ` AND begins_with(${sk}, :prefix)`;
    values[':prefix'] = prefix;
  }
  const result = await dynamoClient().send(
    new QueryCommand({
      TableName: query.table,
      IndexName: query.index,
      KeyConditionExpression: condition,
      ExpressionAttributeValues: marshall(values),
      ProjectionExpression: query.projection?.expression,
      ExpressionAttributeNames: query.projection?.names,
      ScanIndexForward: false,
      Limit: query.limit + 1,
    }),
  );
  const items = (result.Items ?? []).map((item) => unmarshall(item));
  return { items: items.slice(0, query.limit), has_more: items.length > query.limit };
}

/**
 * Every item of a gsi1 listing, newest first, page after page: for listings of tens of items
 * (a workspace's policies, an organisation's workspaces) that are filtered and counted whole.
 */
export async function queryAllNewestFirst(table: string, partition: string): Promise<Record<string, any>[]> {
  const items: Record<string, any>[] = [];
  let start: Record<string, any> | undefined;
  do {
    const page = await dynamoClient().send(
      new QueryCommand({
        TableName: table,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': partition }),
        ScanIndexForward: false,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) items.push(unmarshall(item));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}
