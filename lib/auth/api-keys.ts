import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { GetItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { newId } from '../core/ids';
import { dynamoClient } from '../store/clients';
import { isConditionFailed } from '../store/conditional';
import { queryNewestFirst, type Page } from '../store/newest-first';
import { tables } from '../store/tables';

export type Role = 'admin' | 'member';

/** A stored gateway API key. The secret itself is never stored, only its SHA-256. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  role: Role;
  organisation_id: string;
  workspace_id: string;
  /** First and last characters of the secret, so people can tell their keys apart. */
  hint: string;
  created_at: number;
  revoked_at?: number;
}

const keyPrefix = 'gwk_';

/**
 * The longest key the gateway accepts. Generated keys are `gwk_` and 43 characters (47 in all);
 * `GATEWAY_ADMIN_KEY` is the operator's choice, so the limit leaves it room. Anything longer can
 * never be a key, and is refused before it is hashed or looked up.
 */
export const maxApiKeyLength = 256;

export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function generateApiKeySecret(): string {
  return keyPrefix + randomBytes(32).toString('base64url');
}

function hintOf(secret: string): string {
  return `${secret.slice(0, 8)}…${secret.slice(-4)}`;
}

const keyItemPk = (hash: string) => `APIKEY#${hash}`;
const workspaceKeysPk = (workspaceId: string) => `WS#${workspaceId}#APIKEY`;

/**
 * Stores a key. With `onlyIfAbsent`, an existing key with the same secret is left as it is
 * (used to install a known admin key idempotently).
 */
export async function putApiKey(
  secret: string,
  fields: { name: string; role: Role; organisation_id: string; workspace_id: string },
  options: { onlyIfAbsent?: boolean } = {},
): Promise<ApiKeyRecord> {
  const hash = hashApiKey(secret);
  const record: ApiKeyRecord = { id: newId('key'), hint: hintOf(secret), created_at: Math.floor(Date.now() / 1000), ...fields };
  try {
    await dynamoClient().send(
      new PutItemCommand({
        TableName: tables.control,
        Item: marshall({ pk: keyItemPk(hash), sk: 'APIKEY', gsi1pk: workspaceKeysPk(fields.workspace_id), gsi1sk: record.id, hash, ...record }),
        ConditionExpression: options.onlyIfAbsent ? 'attribute_not_exists(pk)' : undefined,
      }),
    );
  } catch (error) {
    if (options.onlyIfAbsent && isConditionFailed(error)) {
      const existing = await findApiKeyByHash(hash);
      if (existing) return existing.record;
    }
    throw error;
  }
  return record;
}

/** Looks a key up by the SHA-256 of its secret. */
export async function findApiKeyByHash(hash: string): Promise<{ record: ApiKeyRecord; hash: string } | undefined> {
  const result = await dynamoClient().send(
    new GetItemCommand({ TableName: tables.control, Key: marshall({ pk: keyItemPk(hash), sk: 'APIKEY' }), ConsistentRead: true }),
  );
  if (!result.Item) return undefined;
  const item = unmarshall(result.Item);
  // The lookup is by hash already; the comparison in constant time keeps it that way if the key design changes.
  const stored = Buffer.from(String(item.hash), 'hex');
  const given = Buffer.from(hash, 'hex');
  if (stored.length !== given.length || !timingSafeEqual(stored, given)) return undefined;
  return { record: toRecord(item), hash };
}

export type KeyPage = Page<ApiKeyRecord>;

/** Keys of a workspace, newest first. */
export async function listApiKeys(workspaceId: string, options: { limit: number; after?: string }): Promise<KeyPage> {
  const page = await queryNewestFirst({ table: tables.control, index: 'gsi1', partition: workspaceKeysPk(workspaceId), ...options });
  return { data: page.items.map(toRecord), has_more: page.has_more };
}

/** Marks a key revoked. Returns undefined when the workspace has no key with that id. */
export async function revokeApiKey(workspaceId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
  const found = await dynamoClient().send(
    new QueryCommand({
      TableName: tables.control,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :id',
      ExpressionAttributeValues: marshall({ ':pk': workspaceKeysPk(workspaceId), ':id': keyId }),
    }),
  );
  const item = found.Items?.[0];
  if (!item) return undefined;
  const { pk, sk } = unmarshall(item);
  const result = await dynamoClient().send(
    new UpdateItemCommand({
      TableName: tables.control,
      Key: marshall({ pk, sk }),
      UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
      ExpressionAttributeValues: marshall({ ':now': Math.floor(Date.now() / 1000) }),
      ReturnValues: 'ALL_NEW',
    }),
  );
  return toRecord(unmarshall(result.Attributes!));
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
