import { GetItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { apiKeyKey } from './keys';
import { queryAllNewestFirst, queryNewestFirst, type Page } from './newest-first';
import { tables } from './tables';

/**
 * `owner` keys act for the whole organisation (workspaces, keys of any workspace) and as admins of
 * their own workspace; `admin` keys manage one workspace; `member` keys use it.
 */
export type Role = 'owner' | 'admin' | 'member';

/** A stored gateway API key. The secret itself is never stored, only its SHA-256. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  role: Role;
  organisation_id: string;
  workspace_id: string;
  /** The secret's last 4 characters (after `gwk_…` for a generated key), so people can tell their keys apart. */
  hint: string;
  created_at: number;
  revoked_at?: number;
}

/** Stores a key under its secret's hash; with `onlyIfAbsent`, false (and nothing written) when one exists. */
export function putApiKeyItem(hash: string, record: ApiKeyRecord, options: { onlyIfAbsent?: boolean } = {}): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new PutItemCommand({
        TableName: tables.control,
        Item: marshall({ ...apiKeyKey.item(hash), gsi1pk: apiKeyKey.workspaceList(record.workspace_id), gsi1sk: record.id, hash, ...record }),
        ConditionExpression: options.onlyIfAbsent ? 'attribute_not_exists(pk)' : undefined,
      }),
    ),
  );
}

/** The key stored under `hash`, with the hash it was stored with. */
export async function getApiKeyItem(hash: string): Promise<{ record: ApiKeyRecord; storedHash: string } | undefined> {
  const result = await dynamoClient().send(new GetItemCommand({ TableName: tables.control, Key: marshall(apiKeyKey.item(hash)), ConsistentRead: true }));
  if (!result.Item) return undefined;
  const item = unmarshall(result.Item);
  return { record: toRecord(item), storedHash: String(item.hash) };
}

/** Keys of a workspace, newest first. */
export async function listApiKeyItems(workspaceId: string, options: { limit: number; after?: string }): Promise<Page<ApiKeyRecord>> {
  const page = await queryNewestFirst({ table: tables.control, index: 'gsi1', partition: apiKeyKey.workspaceList(workspaceId), ...options });
  return { data: page.items.map(toRecord), has_more: page.has_more };
}

/** The hash a workspace's key is stored under; undefined when the workspace has no key with that id. */
export async function findApiKeyHashInWorkspace(workspaceId: string, keyId: string): Promise<string | undefined> {
  const found = await dynamoClient().send(
    new QueryCommand({
      TableName: tables.control,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :id',
      ExpressionAttributeValues: marshall({ ':pk': apiKeyKey.workspaceList(workspaceId), ':id': keyId }),
      ProjectionExpression: '#hash',
      ExpressionAttributeNames: { '#hash': 'hash' },
    }),
  );
  const item = found.Items?.[0];
  return item ? String(unmarshall(item).hash) : undefined;
}

/**
 * Every key of a workspace with the hash it is stored under, as the listing index holds them (which
 * may lag a write by a moment: read a key's item for its current state).
 */
export async function listAllApiKeyItems(workspaceId: string): Promise<{ record: ApiKeyRecord; hash: string }[]> {
  return (await queryAllNewestFirst(tables.control, apiKeyKey.workspaceList(workspaceId))).map((item) => ({ record: toRecord(item), hash: String(item.hash) }));
}

/** Sets `revoked_at` (once: a second revocation keeps the first time). Undefined when no key is stored under `hash`. */
export async function revokeApiKeyItem(hash: string, now: number): Promise<ApiKeyRecord | undefined> {
  let result: { Attributes?: Record<string, any> } | undefined;
  await writeIfCondition(async () => {
    result = await dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.control,
        Key: marshall(apiKeyKey.item(hash)),
        UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: marshall({ ':now': now }),
        ReturnValues: 'ALL_NEW',
      }),
    );
  });
  return result?.Attributes ? toRecord(unmarshall(result.Attributes)) : undefined;
}

/** Makes a key an owner (a key installed before the owner role existed); false when it is revoked or absent. */
export function promoteApiKeyToOwner(hash: string): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.control,
        Key: marshall(apiKeyKey.item(hash)),
        UpdateExpression: 'SET #role = :owner',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revoked_at)',
        ExpressionAttributeNames: { '#role': 'role' },
        ExpressionAttributeValues: marshall({ ':owner': 'owner' }),
      }),
    ),
  );
}

function toRecord(item: Record<string, any>): ApiKeyRecord {
  const record: ApiKeyRecord = {
    id: item.id,
    name: item.name,
    role: item.role,
    organisation_id: item.organisation_id,
    workspace_id: item.workspace_id,
    hint: item.hint,
    created_at: item.created_at,
  };
  if (item.revoked_at !== undefined) record.revoked_at = item.revoked_at;
  return record;
}
