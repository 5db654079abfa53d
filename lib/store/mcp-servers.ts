import { DeleteItemCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { mcpServerKey } from './keys';
import { queryNewestFirst, type Page } from './newest-first';
import { tables } from './tables';

/** A registered MCP server as stored: its name, URL and times in the clear, its headers sealed (they carry tokens). */
export interface McpServerItem {
  id: string;
  workspace_id: string;
  name: string;
  url: string;
  /** The sealed `{headers}` (an EncryptedBlob). */
  secrets: unknown;
  /** Header name → its masked hint, so lists and answers show the headers without decrypting. */
  header_hints: Record<string, string>;
  created_at: number;
  updated_at: number;
}

/** Writes a server: `ifAbsent` for a new id, `ifPresent` to replace one that still exists. False when the condition did not hold. */
export function putMcpServerItem(item: McpServerItem, condition: 'ifAbsent' | 'ifPresent'): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new PutItemCommand({
        TableName: tables.control,
        Item: marshall(
          { ...mcpServerKey.item(item.workspace_id, item.id), gsi1pk: mcpServerKey.workspaceList(item.workspace_id), gsi1sk: item.id, ...item },
          { convertClassInstanceToMap: false, removeUndefinedValues: true },
        ),
        ConditionExpression: condition === 'ifAbsent' ? 'attribute_not_exists(pk)' : 'attribute_exists(pk)',
      }),
    ),
  );
}

export async function getMcpServerItem(workspaceId: string, id: string): Promise<McpServerItem | undefined> {
  const result = await dynamoClient().send(
    new GetItemCommand({ TableName: tables.control, Key: marshall(mcpServerKey.item(workspaceId, id)), ConsistentRead: true }),
  );
  return result.Item ? strip(unmarshall(result.Item)) : undefined;
}

/** Deletes a server; false when there was none. */
export async function deleteMcpServerItem(workspaceId: string, id: string): Promise<boolean> {
  const result = await dynamoClient().send(
    new DeleteItemCommand({ TableName: tables.control, Key: marshall(mcpServerKey.item(workspaceId, id)), ReturnValues: 'ALL_OLD' }),
  );
  return result.Attributes !== undefined;
}

/** A workspace's servers, newest first. */
export async function listMcpServerItems(workspaceId: string, options: { limit: number; after?: string }): Promise<Page<McpServerItem>> {
  const page = await queryNewestFirst({ table: tables.control, index: 'gsi1', partition: mcpServerKey.workspaceList(workspaceId), ...options });
  return { data: page.items.map(strip), has_more: page.has_more };
}

function strip(item: Record<string, unknown>): McpServerItem {
  const { pk: _pk, sk: _sk, gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, ...fields } = item;
  return fields as unknown as McpServerItem;
}
