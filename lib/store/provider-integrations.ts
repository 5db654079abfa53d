import { DeleteItemCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { newId } from '../core/ids';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { providerIntegrationKey } from './keys';
import { queryNewestFirst, type Page } from './newest-first';
import { tables } from './tables';

/** The fields of a catalog entry the store keys it by; the catalog decides the rest. */
export interface IntegrationFields {
  id: string;
  slug: string;
  workspace_id: string;
  [field: string]: unknown;
}

/** An entry as stored: its fields, the sealed credentials, and the revision that updates are conditional on. */
export type IntegrationItem = IntegrationFields & { secrets?: unknown; revision?: string };

/**
 * Writes an entry with a fresh revision: `ifAbsent` when the slug must be free, `ifRevision` when it
 * must be the same entry, unchanged since it was read (optimistic concurrency). False when the
 * condition did not hold.
 */
export function putIntegrationItem(
  fields: IntegrationFields,
  secrets: object | undefined,
  condition: { ifAbsent: true } | { ifRevision: { id: string; revision: unknown } },
): Promise<boolean> {
  const item = marshall(
    {
      ...providerIntegrationKey.item(fields.workspace_id, fields.slug),
      gsi1pk: providerIntegrationKey.workspaceList(fields.workspace_id),
      gsi1sk: fields.id,
      ...fields,
      secrets,
      revision: newId('rev'),
    },
    { removeUndefinedValues: true, convertClassInstanceToMap: false },
  );
  const expected =
    'ifAbsent' in condition
      ? { ConditionExpression: 'attribute_not_exists(pk)' }
      : {
          ConditionExpression: 'id = :id AND revision = :revision',
          ExpressionAttributeValues: marshall({ ':id': condition.ifRevision.id, ':revision': condition.ifRevision.revision }),
        };
  return writeIfCondition(() => dynamoClient().send(new PutItemCommand({ TableName: tables.control, Item: item, ...expected })));
}

export async function getIntegrationItem(workspaceId: string, slug: string, consistent: boolean): Promise<IntegrationItem | undefined> {
  const result = await dynamoClient().send(
    new GetItemCommand({ TableName: tables.control, Key: marshall(providerIntegrationKey.item(workspaceId, slug)), ConsistentRead: consistent }),
  );
  return result.Item ? (unmarshall(result.Item) as IntegrationItem) : undefined;
}

/** Deletes an entry and returns it as it was; undefined when there was none. */
export async function deleteIntegrationItem(workspaceId: string, slug: string): Promise<IntegrationItem | undefined> {
  const result = await dynamoClient().send(
    new DeleteItemCommand({ TableName: tables.control, Key: marshall(providerIntegrationKey.item(workspaceId, slug)), ReturnValues: 'ALL_OLD' }),
  );
  return result.Attributes ? (unmarshall(result.Attributes) as IntegrationItem) : undefined;
}

/** A workspace's entries, newest first. */
export async function listIntegrationItems(workspaceId: string, options: { limit: number; after?: string }): Promise<Page<IntegrationItem>> {
  const page = await queryNewestFirst({ table: tables.control, index: 'gsi1', partition: providerIntegrationKey.workspaceList(workspaceId), ...options });
  return { data: page.items as IntegrationItem[], has_more: page.has_more };
}
