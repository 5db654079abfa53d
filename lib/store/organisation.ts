import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { bootstrapMarkerKey, organisationKey } from './keys';
import { tables } from './tables';

/** What the bootstrap marker records: the organisation and its default workspace. */
export interface BootstrapMarker {
  organisationId: string;
  workspaceId: string;
}

/** Epoch seconds, as every control item stores `created_at`. */
type Seconds = number;

export async function readBootstrapMarker(): Promise<BootstrapMarker | undefined> {
  const found = await dynamoClient().send(new GetItemCommand({ TableName: tables.control, Key: marshall(bootstrapMarkerKey), ConsistentRead: true }));
  if (!found.Item) return undefined;
  const item = unmarshall(found.Item);
  return { organisationId: item.organisation_id, workspaceId: item.workspace_id };
}

/** Writes the marker unless one exists; false when another process bootstrapped first. */
export function putBootstrapMarkerIfAbsent(marker: BootstrapMarker, createdAt: Seconds): Promise<boolean> {
  return writeIfCondition(() =>
    put({ ...bootstrapMarkerKey, organisation_id: marker.organisationId, workspace_id: marker.workspaceId, created_at: createdAt }, 'attribute_not_exists(pk)'),
  );
}

export async function putOrganisation(organisation: { id: string; name: string; createdAt: Seconds }): Promise<void> {
  await put({ ...organisationKey(organisation.id), id: organisation.id, name: organisation.name, created_at: organisation.createdAt });
}

async function put(item: Record<string, unknown>, condition?: string): Promise<void> {
  await dynamoClient().send(new PutItemCommand({ TableName: tables.control, Item: marshall(item), ConditionExpression: condition }));
}
