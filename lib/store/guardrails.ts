import { DeleteItemCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { guardrailKey } from './keys';
import { queryNewestFirst, type Page } from './newest-first';
import { tables } from './tables';

/** A saved guardrail as stored: its name and times in the clear, its checks and actions sealed (webhook headers may hold tokens). */
export interface GuardrailItem {
  id: string;
  workspace_id: string;
  name: string;
  /** The sealed `{checks, actions}` (an EncryptedBlob). */
  body: unknown;
  created_at: number;
  updated_at: number;
}

/** Writes a guardrail: `ifAbsent` for a new id, `ifPresent` to replace one that still exists. False when the condition did not hold. */
export function putGuardrailItem(item: GuardrailItem, condition: 'ifAbsent' | 'ifPresent'): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new PutItemCommand({
        TableName: tables.control,
        Item: marshall(
          { ...guardrailKey.item(item.workspace_id, item.id), gsi1pk: guardrailKey.workspaceList(item.workspace_id), gsi1sk: item.id, ...item },
          { convertClassInstanceToMap: false },
        ),
        ConditionExpression: condition === 'ifAbsent' ? 'attribute_not_exists(pk)' : 'attribute_exists(pk)',
      }),
    ),
  );
}

export async function getGuardrailItem(workspaceId: string, id: string, consistent: boolean): Promise<GuardrailItem | undefined> {
  const result = await dynamoClient().send(
    new GetItemCommand({ TableName: tables.control, Key: marshall(guardrailKey.item(workspaceId, id)), ConsistentRead: consistent }),
  );
  return result.Item ? strip(unmarshall(result.Item)) : undefined;
}

/** Deletes a guardrail; false when there was none. */
export async function deleteGuardrailItem(workspaceId: string, id: string): Promise<boolean> {
  const result = await dynamoClient().send(
    new DeleteItemCommand({ TableName: tables.control, Key: marshall(guardrailKey.item(workspaceId, id)), ReturnValues: 'ALL_OLD' }),
  );
  return result.Attributes !== undefined;
}

/** A workspace's guardrails, newest first. */
export async function listGuardrailItems(workspaceId: string, options: { limit: number; after?: string }): Promise<Page<GuardrailItem>> {
  const page = await queryNewestFirst({ table: tables.control, index: 'gsi1', partition: guardrailKey.workspaceList(workspaceId), ...options });
  return { data: page.items.map(strip), has_more: page.has_more };
}

/** The item without its key attributes. */
function strip(item: Record<string, unknown>): GuardrailItem {
  const { pk: _pk, sk: _sk, gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, ...fields } = item;
  return fields as unknown as GuardrailItem;
}
