import { GetItemCommand, PutItemCommand, UpdateItemCommand, type UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
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

/**
 * The organisation's counted owner keys: `owner_keys`, the ids of active owner keys (a key missing
 * from it is uncounted, never the other way round), and `revoked_owner_keys`, the ids whose
 * revocation was counted, with when, so that a creation still on its way cannot count a key again
 * after its revocation. Undefined for an organisation stored before owner keys were counted.
 */
export interface OwnerKeyCount {
  keyIds: Set<string>;
  revokedAt: Map<string, Seconds>;
}

export async function readOwnerKeyCount(organisationId: string): Promise<OwnerKeyCount | undefined> {
  const found = await dynamoClient().send(
    new GetItemCommand({
      TableName: tables.control,
      Key: marshall(organisationKey(organisationId)),
      ConsistentRead: true,
      ProjectionExpression: 'owner_keys, revoked_owner_keys',
    }),
  );
  const item = found.Item ? unmarshall(found.Item) : undefined;
  if (!item?.owner_keys) return undefined;
  return { keyIds: new Set(item.owner_keys as Set<string>), revokedAt: new Map(Object.entries((item.revoked_owner_keys ?? {}) as Record<string, Seconds>)) };
}

/** Starts the count with keys read one by one; false when another process started it first. */
export function initialiseOwnerKeyCount(organisationId: string, keyIds: readonly string[]): Promise<boolean> {
  return updateOrganisationIf(organisationId, {
    UpdateExpression: 'SET owner_keys = :keys, revoked_owner_keys = if_not_exists(revoked_owner_keys, :none)',
    ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(owner_keys)',
    ExpressionAttributeValues: marshall({ ':keys': new Set(keyIds), ':none': {} }),
  });
}

/**
 * Counts a key that has just become an owner, if the organisation counts them and the key's
 * revocation was not counted already. Adding an id twice counts it once.
 */
export async function countOwnerKey(organisationId: string, keyId: string): Promise<void> {
  await updateOrganisationIf(organisationId, {
    UpdateExpression: 'ADD owner_keys :key',
    ConditionExpression: 'attribute_exists(owner_keys) AND attribute_not_exists(revoked_owner_keys.#key)',
    ExpressionAttributeNames: { '#key': keyId },
    ExpressionAttributeValues: marshall({ ':key': new Set([keyId]) }),
  });
}

/**
 * Counts an owner key's revocation: removes it from the counted keys unless it is the last one
 * (false then, and nothing written), and records that it was revoked. `forget` names old records
 * to drop in the same write.
 */
export function uncountOwnerKey(organisationId: string, keyId: string, now: Seconds, forget: readonly string[]): Promise<boolean> {
  const names: Record<string, string> = { '#key': keyId };
  forget.forEach((id, i) => (names[`#old${i}`] = id));
  const remove = forget.length > 0 ? ` REMOVE ${forget.map((_, i) => `revoked_owner_keys.#old${i}`).join(', ')}` : '';
  return updateOrganisationIf(organisationId, {
    UpdateExpression: `DELETE owner_keys :keys SET revoked_owner_keys.#key = :now${remove}`,
    ConditionExpression: 'attribute_exists(owner_keys) AND (NOT contains(owner_keys, :key) OR size(owner_keys) > :one)',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: marshall({ ':keys': new Set([keyId]), ':key': keyId, ':now': now, ':one': 1 }),
  });
}

/** A conditional update of the organisation item; false (and nothing written) when its condition fails. */
function updateOrganisationIf(organisationId: string, update: Omit<UpdateItemCommandInput, 'TableName' | 'Key'>): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(new UpdateItemCommand({ TableName: tables.control, Key: marshall(organisationKey(organisationId)), ...update })),
  );
}
